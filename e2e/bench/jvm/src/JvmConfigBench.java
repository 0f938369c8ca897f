import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;

/**
 * What Kafka does with a client config, timed on the same bytes the Rust engine bench reads:
 *
 * <ul>
 *   <li>{@code load}: {@code Properties.load(InputStream)} of the file's bytes.</li>
 *   <li>{@code store}: {@code Properties.store(StringWriter, null)} of the loaded properties.</li>
 *   <li>{@code pipeline}: load, then the same n/10 overrides the Rust bench's spec carries
 *       ({@code custom.interceptor.setting.i=override-i}), then {@code key.serializer} and
 *       {@code value.serializer} as kafka-console-producer forces them (ProducerConfig has no
 *       default for them, so parse would throw without), then
 *       {@code ProducerConfig.configDef().parse(props)} (type parsing and validators of every
 *       producer key; unknown keys are ignored, as Kafka does), then store.</li>
 * </ul>
 *
 * <p>Each (op, size): warm-up for a fixed time, calibrate a batch to ~batchMillis, then time
 * `batches` batches and report the median ns/op of the batches (plus min and max). Output is one
 * JSON object on stdout.
 *
 * <p>Usage: {@code java JvmConfigBench INPUT_DIR [warmupSeconds=2] [batches=10] [batchMillis=200]
 * [sizes=20,200,5000]}; inputs are INPUT_DIR/client-N.properties.
 *
 * <p>{@code java JvmConfigBench --serve INPUT_DIR [warmupSeconds=2]}: the JVM half of the script's
 * paired rounds (the engine half is benches/engine_paired.rs, same protocol). Warms every
 * (op, size) up, prints {@code ready}, then for each {@code OP KEYS MILLIS BATCHES} line on stdin
 * times ~MILLIS of the op in BATCHES batches and prints one JSON line (median, min, max ns/op).
 */
public final class JvmConfigBench {
    /** Keeps results alive so the JIT cannot drop the work. */
    static long sink;

    interface Op {
        void run() throws IOException;
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--serve")) {
            serve(Path.of(args[1]), args.length > 2 ? Double.parseDouble(args[2]) : 2.0);
            return;
        }
        Path dir = Path.of(args[0]);
        double warmupSeconds = args.length > 1 ? Double.parseDouble(args[1]) : 2.0;
        int batches = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        long batchMillis = args.length > 3 ? Long.parseLong(args[3]) : 200;
        int[] sizes = args.length > 4
                ? Arrays.stream(args[4].split(",")).mapToInt(Integer::parseInt).toArray()
                : new int[] {20, 200, 5000};

        // Built once, as ProducerConfig does (it parses against its static CONFIG).
        ConfigDef def = ProducerConfig.configDef();

        StringBuilder json = new StringBuilder();
        json.append("{\"java\":\"").append(System.getProperty("java.vm.name")).append(' ')
                .append(System.getProperty("java.runtime.version")).append("\",")
                .append("\"warmup_s\":").append(warmupSeconds).append(',')
                .append("\"batches\":").append(batches).append(',')
                .append("\"batch_ms\":").append(batchMillis).append(",\"results\":[");
        boolean first = true;
        for (int n : sizes) {
            byte[] bytes = Files.readAllBytes(dir.resolve("client-" + n + ".properties"));
            int keys = load(bytes).size();
            // In the order of the report's tables.
            Map<String, Op> byName = ops(bytes, n, def);
            String[] names = {"load", "store", "pipeline"};
            for (int k = 0; k < names.length; k++) {
                double[] r = measure(byName.get(names[k]), warmupSeconds, batches, batchMillis);
                if (!first) json.append(',');
                first = false;
                json.append(String.format(Locale.ROOT,
                        "{\"op\":\"%s\",\"n\":%d,\"keys_loaded\":%d,\"bytes\":%d,"
                                + "\"median_ns\":%.1f,\"min_ns\":%.1f,\"max_ns\":%.1f,"
                                + "\"iters_per_batch\":%d}",
                        names[k], n, keys, bytes.length, r[0], r[1], r[2], (long) r[3]));
                System.err.printf(Locale.ROOT, "jvm %-8s n=%-5d median %12.1f ns/op %8.1f ns/key%n",
                        names[k], n, r[0], r[0] / n);
            }
        }
        json.append("],\"sink\":").append(sink).append('}');
        System.out.println(json);
    }

    /** The ops on one input file's bytes (n keys): load, store, pipeline. */
    static Map<String, Op> ops(byte[] bytes, int n, ConfigDef def) throws IOException {
        Map<String, String> overrides = new HashMap<>();
        for (int i = 0; i < Math.max(n / 10, 1); i++) {
            overrides.put("custom.interceptor.setting." + i, "override-" + i);
        }
        Properties loaded = load(bytes);
        // Sanity: the pipeline must parse (throws ConfigException otherwise).
        pipeline(bytes, overrides, def);
        Map<String, Op> ops = new TreeMap<>();
        ops.put("load", () -> sink += load(bytes).size());
        ops.put("store", () -> sink += store(loaded).length());
        ops.put("pipeline", () -> sink += pipeline(bytes, overrides, def));
        return ops;
    }

    static void serve(Path dir, double warmupSeconds) throws IOException {
        ConfigDef def = ProducerConfig.configDef();
        Map<String, Op> byName = new HashMap<>();
        for (int n : new int[] {20, 200, 5000}) {
            byte[] bytes = Files.readAllBytes(dir.resolve("client-" + n + ".properties"));
            for (Map.Entry<String, Op> e : ops(bytes, n, def).entrySet()) {
                byName.put(e.getKey() + " " + n, e.getValue());
                // Warm-up only: the JIT compiles each path before any round is timed.
                measure(e.getValue(), warmupSeconds, 1, 1);
            }
        }
        System.out.println("ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.trim().split("\\s+");
            Op op = w.length == 4 ? byName.get(w[0] + " " + w[1]) : null;
            if (op == null) {
                System.out.println("{\"error\":\"bad request\"}");
                System.out.flush();
                continue;
            }
            int batches;
            long batchMillis;
            try {
                batches = Math.max(1, Integer.parseInt(w[3]));
                batchMillis = Math.max(1, Long.parseLong(w[2]) / batches);
            } catch (NumberFormatException e) {
                System.out.println("{\"error\":\"bad request\"}");
                System.out.flush();
                continue;
            }
            // A short re-warm doubles as the calibration of the batch size.
            double[] r = measure(op, 0.02, batches, batchMillis);
            System.out.println(String.format(Locale.ROOT,
                    "{\"op\":\"%s\",\"n\":%s,\"median_ns\":%.1f,\"min_ns\":%.1f,\"max_ns\":%.1f,"
                            + "\"batches\":%d,\"sink\":%d}",
                    w[0], w[1], r[0], r[1], r[2], batches, sink));
            System.out.flush();
        }
    }

    static Properties load(byte[] bytes) throws IOException {
        Properties p = new Properties();
        p.load(new ByteArrayInputStream(bytes));
        return p;
    }

    static String store(Properties p) throws IOException {
        StringWriter w = new StringWriter();
        p.store(w, null);
        return w.toString();
    }

    static int pipeline(byte[] bytes, Map<String, String> overrides, ConfigDef def)
            throws IOException {
        Properties p = load(bytes);
        p.putAll(overrides);
        p.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        p.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        Map<String, Object> parsed = def.parse(p);
        return parsed.size() + store(p).length();
    }

    /** Returns {median, min, max} ns/op over the batches, and the iterations per batch. */
    static double[] measure(Op op, double warmupSeconds, int batches, long batchMillis)
            throws IOException {
        long warmEnd = System.nanoTime() + (long) (warmupSeconds * 1e9);
        long warmIters = 0;
        long warmStart = System.nanoTime();
        while (System.nanoTime() < warmEnd) {
            op.run();
            warmIters++;
        }
        double nsPerOp = (double) (System.nanoTime() - warmStart) / warmIters;
        long iters = Math.max(1, (long) (batchMillis * 1e6 / nsPerOp));
        List<Double> per = new ArrayList<>();
        for (int b = 0; b < batches; b++) {
            long t0 = System.nanoTime();
            for (long i = 0; i < iters; i++) {
                op.run();
            }
            per.add((double) (System.nanoTime() - t0) / iters);
        }
        double[] sorted = per.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int m = sorted.length;
        double median = m % 2 == 1 ? sorted[m / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
        return new double[] {median, sorted[0], sorted[m - 1], iters};
    }
}
