-- Runs Argo CD health checks (health.lua) on fixtures, the way Argo's gopher-lua sandbox would see
-- them: `obj` is a global, and `string` and `math` are not there (nor string methods), so a
-- script that would fail in Argo fails here. Lua 5.1 also rejects `goto` at parse time.
--
--   lua5.1 lua_health_test.lua HEALTH_LUA CASES_LUA [LABEL]
--
-- CASES_LUA returns { {name=, status=, message=, obj=}, ... } (lua_health_test.sh generates it
-- from health_test.yaml and testdata/*.yaml). Prints `ok     - ...` / `FAILED - ...` per case,
-- like e2e/lib.sh, and exits 1 when a case failed.
local script, cases_file, name = arg[1], arg[2], arg[3] or arg[1]
local cases = dofile(cases_file)

-- Take the libraries away before loading the script under test.
string = nil
math = nil
local string_methods = getmetatable("")
local saved_index = string_methods.__index

local failed = 0
for _, case in ipairs(cases) do
  local env = {}
  for k, v in pairs(_G) do
    env[k] = v
  end
  env._G = env
  env.obj = case.obj
  local chunk, load_error = loadfile(script)
  local ok, hs
  if chunk == nil then
    ok, hs = false, load_error
  else
    setfenv(chunk, env)
    string_methods.__index = nil
    ok, hs = pcall(chunk)
    string_methods.__index = saved_index
  end
  local label = name .. " " .. case.name
  if not ok then
    failed = failed + 1
    print("FAILED - " .. label .. ": error: " .. tostring(hs))
  elseif type(hs) ~= "table" then
    failed = failed + 1
    print("FAILED - " .. label .. ": returned " .. type(hs) .. ", not a table")
  elseif hs.status ~= case.status or hs.message ~= case.message then
    failed = failed + 1
    print("FAILED - " .. label .. ": expected " .. case.status .. " '" .. case.message .. "', got "
      .. tostring(hs.status) .. " '" .. tostring(hs.message) .. "'")
  else
    print("ok     - " .. label .. " -> " .. hs.status .. " '" .. hs.message .. "'")
  end
end
if failed > 0 then
  os.exit(1)
end
