import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The conformance check's stand-in for an application (`tool: client`, which has no command
 * line): builds each role's Kafka client from its rendered properties file, the way an
 * application does, so that the client logs the configuration it ends up with ("ProducerConfig
 * values:" ...). Serializers/deserializers are passed in code only when the file names none
 * (an application always supplies them one way or the other). Nothing connects: conformance.py
 * stops the JVM once every block is logged.
 *
 * <p>Usage: {@code java -cp 'JARS/*' conformance/ConstructClients.java ROLE FILE [ROLE FILE]...}
 * with ROLE one of producer, consumer, share-consumer, admin.
 */
public final class ConstructClients {

    private ConstructClients() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || args.length % 2 != 0) {
            throw new IllegalArgumentException("usage: ConstructClients ROLE FILE [ROLE FILE]...");
        }
        for (int i = 0; i < args.length; i += 2) {
            Properties props = new Properties();
            // Utils.loadProps reads the file the same way (Properties.load of a byte stream)
            try (InputStream in = Files.newInputStream(Path.of(args[i + 1]))) {
                props.load(in);
            }
            // null: the client takes the class from the file, as with a plain new KafkaProducer(props)
            ByteArraySerializer keySerializer = props.containsKey("key.serializer") ? null : new ByteArraySerializer();
            ByteArraySerializer valueSerializer = props.containsKey("value.serializer") ? null : new ByteArraySerializer();
            ByteArrayDeserializer keyDeserializer = props.containsKey("key.deserializer") ? null : new ByteArrayDeserializer();
            ByteArrayDeserializer valueDeserializer = props.containsKey("value.deserializer") ? null : new ByteArrayDeserializer();
            // Each client is kept open: closing it would try to reach the cluster, and the JVM is
            // stopped from outside once every block is logged.
            switch (args[i]) {
                case "producer" -> new KafkaProducer<>(props, keySerializer, valueSerializer);
                case "consumer" -> new KafkaConsumer<>(props, keyDeserializer, valueDeserializer);
                case "share-consumer" -> new KafkaShareConsumer<>(props, keyDeserializer, valueDeserializer);
                case "admin" -> Admin.create(props);
                default -> throw new IllegalArgumentException("unknown role " + args[i]);
            }
            System.out.flush();
        }
        Thread.sleep(Long.MAX_VALUE);
    }
}
