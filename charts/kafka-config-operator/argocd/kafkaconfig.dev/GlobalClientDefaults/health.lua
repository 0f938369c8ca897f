-- Argo CD health check for kafkaconfig.dev/GlobalClientDefaults.
-- Healthy only when Valid=True for the current spec (status.observedGeneration, and the
-- condition's own observedGeneration when present, equal metadata.generation); Progressing while
-- there is no status, Valid is missing or Unknown, or the operator has not seen the latest spec;
-- Degraded with the condition's message when Valid=False.
-- Written for Argo's gopher-lua sandbox: no string.*, math.* or goto.
local hs = {}
local generation = nil
if obj.metadata ~= nil then
  generation = obj.metadata.generation
end
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to report status"
  return hs
end
local observed = obj.status.observedGeneration
if generation ~= nil and (observed == nil or observed < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. tostring(generation)
  return hs
end
local condition = nil
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Valid" then
    condition = c
  end
end
if condition == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Valid condition"
  return hs
end
if generation ~= nil and condition.observedGeneration ~= nil and condition.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the Valid condition of generation " .. tostring(generation)
  return hs
end
local message = condition.message
if message == nil or message == "" then
  message = condition.reason
end
if message == nil then
  message = ""
end
if condition.status == "True" then
  hs.status = "Healthy"
  hs.message = message
  return hs
end
if condition.status == "False" then
  hs.status = "Degraded"
  hs.message = message
  return hs
end
hs.status = "Progressing"
hs.message = message
return hs
