import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * One JVM that drives RocketMQ's own Java client for the interoperability tests, so a test file pays
 * the JVM start once. Commands come one per line on stdin, fields separated by TAB; every command
 * answers one line on stdout, {"ev":"ok",...} or {"ev":"error","message":...}. Deliveries to push
 * consumers are printed as {"ev":"msg",...} lines whenever they happen.
 *
 *   producer NAME NAMESRV
 *   send NAME TOPIC TAG KEYS BODY [k=v ...]
 *   batch NAME TOPIC TAG COUNT BODY_PREFIX
 *   consumer ID NAMESRV GROUP TOPIC tag|sql EXPRESSION ok|later MAX_RECONSUME_TIMES
 *   stop ID                       (a producer or a consumer; a consumer commits its offsets)
 *   admin ARG...                  (runs mqadmin's MQAdminStartup in this JVM; output in "out")
 *   exit
 */
public final class Driver {
    private static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
        StandardCharsets.UTF_8);
    private static final Map<String, DefaultMQProducer> producers = new ConcurrentHashMap<>();
    private static final Map<String, DefaultMQPushConsumer> consumers = new ConcurrentHashMap<>();

    static String q(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static synchronized void emit(String json) {
        OUT.println(json);
        OUT.flush();
    }

    public static void main(String[] args) throws Exception {
        // Keep the tools' and the client's own console output away from the protocol on stdout.
        System.setOut(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        emit("{\"ev\":\"ready\"}");
        String line;
        while ((line = in.readLine()) != null) {
            String[] a = line.split("\t", -1);
            try {
                if (a[0].equals("exit")) break;
                emit(run(a));
            } catch (Throwable e) {
                emit("{\"ev\":\"error\",\"cmd\":" + q(a[0]) + ",\"message\":" + q(String.valueOf(e)) + "}");
            }
        }
        for (DefaultMQPushConsumer c : consumers.values()) c.shutdown();
        for (DefaultMQProducer p : producers.values()) p.shutdown();
        System.exit(0);
    }

    static String run(String[] a) throws Exception {
        switch (a[0]) {
            case "producer": {
                DefaultMQProducer p = new DefaultMQProducer(a[1]);
                p.setNamesrvAddr(a[2]);
                p.setInstanceName(a[1]);
                p.setSendMsgTimeout(10000);
                p.start();
                producers.put(a[1], p);
                return "{\"ev\":\"ok\",\"cmd\":\"producer\"}";
            }
            case "send": {
                Message m = new Message(a[2], a[3], a[5].getBytes(StandardCharsets.UTF_8));
                if (!a[4].isEmpty()) m.setKeys(a[4]);
                for (int i = 6; i < a.length; i++) {
                    int eq = a[i].indexOf('=');
                    m.putUserProperty(a[i].substring(0, eq), a[i].substring(eq + 1));
                }
                SendResult r = producers.get(a[1]).send(m);
                return "{\"ev\":\"ok\",\"cmd\":\"send\",\"status\":" + q(r.getSendStatus().name()) + ",\"msgId\":"
                    + q(r.getMsgId()) + ",\"offsetMsgId\":" + q(r.getOffsetMsgId()) + ",\"queueId\":"
                    + r.getMessageQueue().getQueueId() + ",\"queueOffset\":" + r.getQueueOffset() + "}";
            }
            case "batch": {
                int n = Integer.parseInt(a[4]);
                List<Message> batch = new ArrayList<>();
                for (int i = 0; i < n; i++) batch.add(new Message(a[2], a[3], (a[5] + i).getBytes(StandardCharsets.UTF_8)));
                SendResult r = producers.get(a[1]).send(batch);
                return "{\"ev\":\"ok\",\"cmd\":\"batch\",\"status\":" + q(r.getSendStatus().name()) + ",\"offsetMsgId\":"
                    + q(r.getOffsetMsgId()) + ",\"queueId\":" + r.getMessageQueue().getQueueId() + ",\"queueOffset\":"
                    + r.getQueueOffset() + "}";
            }
            case "consumer": {
                String id = a[1];
                DefaultMQPushConsumer c = new DefaultMQPushConsumer(a[3]);
                c.setNamesrvAddr(a[2]);
                c.setInstanceName(id);
                c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
                c.setMaxReconsumeTimes(Integer.parseInt(a[8]));
                c.setPullTimeDelayMillsWhenException(200);
                // Tests: routes (e.g. of %RETRY%group, created by the first heartbeat) and offsets move every second.
                c.setPollNameServerInterval(1000);
                c.setPersistConsumerOffsetInterval(1000);
                if (a[5].equals("sql")) c.subscribe(a[4], MessageSelector.bySql(a[6]));
                else c.subscribe(a[4], a[6]);
                final boolean later = a[7].equals("later");
                c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                    for (MessageExt m : msgs) {
                        emit("{\"ev\":\"msg\",\"c\":" + q(id) + ",\"topic\":" + q(m.getTopic()) + ",\"tags\":"
                            + q(m.getTags()) + ",\"keys\":" + q(m.getKeys()) + ",\"body\":"
                            + q(new String(m.getBody(), StandardCharsets.UTF_8)) + ",\"queueId\":" + m.getQueueId()
                            + ",\"queueOffset\":" + m.getQueueOffset() + ",\"reconsumeTimes\":" + m.getReconsumeTimes()
                            + ",\"msgId\":" + q(m.getMsgId()) + "}");
                    }
                    return later ? ConsumeConcurrentlyStatus.RECONSUME_LATER : ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
                });
                c.start();
                consumers.put(id, c);
                return "{\"ev\":\"ok\",\"cmd\":\"consumer\"}";
            }
            case "stop": {
                DefaultMQPushConsumer c = consumers.remove(a[1]);
                if (c != null) c.shutdown();
                DefaultMQProducer p = producers.remove(a[1]);
                if (p != null) p.shutdown();
                return "{\"ev\":\"ok\",\"cmd\":\"stop\",\"found\":" + (c != null || p != null) + "}";
            }
            case "admin": {
                String[] adminArgs = new String[a.length - 1];
                System.arraycopy(a, 1, adminArgs, 0, adminArgs.length);
                ByteArrayOutputStream buf = new ByteArrayOutputStream();
                PrintStream saved = System.out;
                System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
                try {
                    Class<?> startup = Class.forName("org.apache.rocketmq.tools.command.MQAdminStartup");
                    Method main0 = startup.getMethod("main0", String[].class, org.apache.rocketmq.remoting.RPCHook.class);
                    main0.invoke(null, adminArgs, null);
                } finally {
                    System.out.flush();
                    System.setOut(saved);
                }
                return "{\"ev\":\"ok\",\"cmd\":\"admin\",\"out\":" + q(buf.toString(StandardCharsets.UTF_8)) + "}";
            }
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }
}
