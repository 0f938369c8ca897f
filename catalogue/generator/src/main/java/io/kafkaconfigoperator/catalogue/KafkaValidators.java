package io.kafkaconfigoperator.catalogue;

import org.apache.kafka.common.config.ConfigDef.Validator;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Structured forms for Kafka validator classes that are not ConfigDef's own. What each class
 * accepts was read from its Kafka 4.3.1 source (named per case); the parameters (enum names,
 * action lists) are read from Kafka's classes here, so they follow the release. A class missing
 * here stays {@code {"kind":"other"}}; the engine checks nothing for it and docs/conformance.md
 * lists it.
 */
final class KafkaValidators {

    private KafkaValidators() {
    }

    /** Writes v's kind and parameters into m and returns true, or returns false (m untouched). */
    static boolean describe(Validator v, Map<String, Object> m) {
        String name = v.getClass().getName();
        try {
            switch (name) {
                case "org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy$Validator" -> {
                    // AutoOffsetResetStrategy.fromString: one of Utils.enumOptions(StrategyType)
                    // (case-sensitive, lower case) other than by_duration itself, or
                    // "by_duration:" + text java.time.Duration.parse accepts, not negative.
                    Class<?> type = Class.forName("org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy$StrategyType");
                    List<String> values = new ArrayList<>();
                    String byDuration = null;
                    for (Object e : type.getEnumConstants()) {
                        if (((Enum<?>) e).name().equals("BY_DURATION")) {
                            byDuration = e.toString();
                        } else {
                            values.add(e.toString());
                        }
                    }
                    if (byDuration == null) {
                        throw new IllegalStateException("AutoOffsetResetStrategy.StrategyType has no BY_DURATION");
                    }
                    m.put("kind", "autoOffsetReset");
                    m.put("class", name);
                    m.put("values", values);
                    m.put("durationPrefix", byDuration + ":");
                }
                case "org.apache.kafka.clients.consumer.internals.ShareAcknowledgementMode$Validator" -> {
                    // ShareAcknowledgementMode.fromString: Utils.enumOptions(AcknowledgementMode)
                    // .contains(value), i.e. exactly one of the lower-case names
                    Class<?> type = Class.forName("org.apache.kafka.clients.consumer.internals.ShareAcknowledgementMode$AcknowledgementMode");
                    List<String> values = new ArrayList<>();
                    for (Object e : type.getEnumConstants()) {
                        values.add(e.toString());
                    }
                    m.put("kind", "validString");
                    m.put("class", name);
                    m.put("values", values);
                    m.put("allowNull", false);
                }
                case "org.apache.kafka.clients.consumer.internals.ShareAcquireMode$Validator" -> {
                    // ShareAcquireMode.of: valueOf(value.toUpperCase(Locale.ROOT)), the same test
                    // as CaseInsensitiveValidString over the enum's constant names
                    Class<?> type = Class.forName("org.apache.kafka.clients.consumer.internals.ShareAcquireMode");
                    List<String> values = new ArrayList<>();
                    for (Object e : type.getEnumConstants()) {
                        values.add(((Enum<?>) e).name());
                    }
                    values.sort(null);
                    m.put("kind", "caseInsensitiveValidString");
                    m.put("class", name);
                    m.put("values", values);
                }
                case "org.apache.kafka.storage.internals.log.ThrottledReplicaListValidator" -> {
                    // every trimmed item matches ([0-9]+:[0-9]+)?, or the items joined are "*"
                    m.put("kind", "throttledReplicaList");
                    m.put("class", name);
                }
                case "org.apache.kafka.raft.QuorumConfig$ControllerQuorumVotersValidator" -> {
                    // QuorumConfig.parseVoterConnections(list, false): each item {id}@{host}:{port}
                    m.put("kind", "quorumVoters");
                    m.put("class", name);
                }
                case "org.apache.kafka.raft.QuorumConfig$ControllerQuorumBootstrapServersValidator" -> {
                    // QuorumConfig.parseBootstrapServer on each item: {host}:{port}
                    m.put("kind", "quorumBootstrapServers");
                    m.put("class", name);
                }
                case "org.apache.kafka.connect.runtime.rest.RestServerConfig$ListenersValidator" -> {
                    // at least one item, no blank item
                    m.put("kind", "restListeners");
                    m.put("class", name);
                }
                case "org.apache.kafka.connect.runtime.rest.RestServerConfig$ResponseHttpHeadersValidator" -> {
                    // blank, or Jetty StringUtil.csvSplit rules each '[action] [name]:[value]',
                    // the action one of RestServerConfig.HEADER_ACTIONS (equalsIgnoreCase)
                    @SuppressWarnings("unchecked")
                    Collection<String> actions = (Collection<String>) Generate.staticField(
                        "org.apache.kafka.connect.runtime.rest.RestServerConfig", "HEADER_ACTIONS");
                    m.put("kind", "responseHttpHeaders");
                    m.put("class", name);
                    m.put("actions", new ArrayList<>(actions));
                }
                default -> {
                    return false;
                }
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("reading " + name + " (did the Kafka release move it?)", e);
        }
        return true;
    }
}
