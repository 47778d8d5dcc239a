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
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * One JVM that drives RocketMQ's own Java client for the interoperability tests, so a test file pays
 * the JVM start once. Commands come one per line on stdin, fields separated by TAB; every command
 * answers one line on stdout, {"ev":"ok",...} or {"ev":"error","message":...}. Deliveries to push
 * consumers (push and lite pull) are printed as {"ev":"msg",...} lines whenever they happen, and the
 * broker's check-backs of a transactional producer as {"ev":"check",...} lines.
 *
 *   producer NAME NAMESRV [ak=AK sk=SK] [ns=NAMESPACE] [trace]
 *                                 (ak/sk: requests signed by AclClientRPCHook; ns: setNamespace; trace:
 *                                 RocketMQ's message trace on, new DefaultMQProducer(group, true, null))
 *   send NAME TOPIC TAG KEYS BODY [k=v ...]
 *   batch NAME TOPIC TAG COUNT BODY_PREFIX
 *   consumer ID NAMESRV GROUP TOPIC tag|sql EXPRESSION ok|later MAX_RECONSUME_TIMES [ak=AK sk=SK] [ns=NAMESPACE]
 *   txproducer NAME NAMESRV GROUP (a TransactionMQProducer; its checks answer UNKNOW until txcheck)
 *   txsend NAME TOPIC BODY COMMIT|ROLLBACK|UNKNOW|HALT
 *                                 (executeLocalTransaction returns the state in the txState property;
 *                                 HALT ends the JVM at once instead: a producer that dies undecided)
 *   txcheck NAME COMMIT|ROLLBACK|UNKNOW  (what checkLocalTransaction answers from now on)
 *   litepull ID NAMESRV GROUP TOPIC     (a DefaultLitePullConsumer subscribed to TOPIC with "*", polling)
 *   stop ID                       (a producer or a consumer; a consumer commits its offsets)
 *   admin ARG...                  (runs mqadmin's MQAdminStartup in this JVM; output in "out")
 *   exit
 *
 * A NAMESPACE (optional, last) is ClientConfig.setNamespace: the client's topics and group live in it.
 */
public final class Driver {
    private static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
        StandardCharsets.UTF_8);
    private static final Map<String, DefaultMQProducer> producers = new ConcurrentHashMap<>();
    private static final Map<String, DefaultMQPushConsumer> consumers = new ConcurrentHashMap<>();
    private static final Map<String, LitePull> litePulls = new ConcurrentHashMap<>();
    /** What each transactional producer's checkLocalTransaction answers, by producer name. */
    private static final Map<String, LocalTransactionState> checkAnswers = new ConcurrentHashMap<>();

    /** A lite pull consumer and the thread that polls it until stopped. */
    static final class LitePull {
        final DefaultLitePullConsumer consumer;
        volatile boolean running = true;
        Thread poller;

        LitePull(DefaultLitePullConsumer consumer) {
            this.consumer = consumer;
        }

        void stop() throws InterruptedException {
            running = false;
            poller.join(10000);
            consumer.shutdown();
        }
    }

    /** The test's short names for the states, as txsend and txcheck take them. */
    static LocalTransactionState txState(String name) {
        switch (name) {
            case "COMMIT": return LocalTransactionState.COMMIT_MESSAGE;
            case "ROLLBACK": return LocalTransactionState.ROLLBACK_MESSAGE;
            case "UNKNOW": return LocalTransactionState.UNKNOW;
            default: throw new IllegalArgumentException("unknown transaction state " + name);
        }
    }

    static String msgJson(String id, MessageExt m) {
        return "{\"ev\":\"msg\",\"c\":" + q(id) + ",\"topic\":" + q(m.getTopic()) + ",\"tags\":"
            + q(m.getTags()) + ",\"keys\":" + q(m.getKeys()) + ",\"body\":"
            + q(new String(m.getBody(), StandardCharsets.UTF_8)) + ",\"queueId\":" + m.getQueueId()
            + ",\"queueOffset\":" + m.getQueueOffset() + ",\"reconsumeTimes\":" + m.getReconsumeTimes()
            + ",\"msgId\":" + q(m.getMsgId()) + "}";
    }

    /** The error and its causes (a refused send's broker answer is the cause of the client's exception). */
    static String withCauses(Throwable e) {
        StringBuilder sb = new StringBuilder(String.valueOf(e));
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) sb.append("; caused by: ").append(c);
        return sb.toString();
    }

    /** RocketMQ's plain-ACL signing hook for an account. */
    /** The value of the optional argument `key=value` among a[from..], or null. */
    static String opt(String[] a, int from, String key) {
        for (int i = from; i < a.length; i++) if (a[i].startsWith(key + "=")) return a[i].substring(key.length() + 1);
        return null;
    }

    /** Whether the optional argument `name` is among a[from..]. */
    static boolean flag(String[] a, int from, String name) {
        for (int i = from; i < a.length; i++) if (a[i].equals(name)) return true;
        return false;
    }

    static org.apache.rocketmq.remoting.RPCHook aclHook(String ak, String sk) {
        return new AclClientRPCHook(new SessionCredentials(ak, sk));
    }

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
                emit("{\"ev\":\"error\",\"cmd\":" + q(a[0]) + ",\"message\":" + q(withCauses(e)) + "}");
            }
        }
        for (LitePull l : litePulls.values()) l.stop();
        for (DefaultMQPushConsumer c : consumers.values()) c.shutdown();
        for (DefaultMQProducer p : producers.values()) p.shutdown();
        System.exit(0);
    }

    static String run(String[] a) throws Exception {
        switch (a[0]) {
            case "producer": {
                String ak = opt(a, 3, "ak"), sk = opt(a, 3, "sk"), ns = opt(a, 3, "ns");
                DefaultMQProducer p = ak != null ? new DefaultMQProducer(a[1], aclHook(ak, sk))
                    : flag(a, 3, "trace") ? new DefaultMQProducer(a[1], true, null) : new DefaultMQProducer(a[1]);
                p.setNamesrvAddr(a[2]);
                if (ns != null) p.setNamespace(ns);
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
                String ak = opt(a, 9, "ak"), sk = opt(a, 9, "sk"), ns = opt(a, 9, "ns");
                DefaultMQPushConsumer c = ak != null
                    ? new DefaultMQPushConsumer(a[3], aclHook(ak, sk), new AllocateMessageQueueAveragely())
                    : new DefaultMQPushConsumer(a[3]);
                c.setNamesrvAddr(a[2]);
                if (ns != null) c.setNamespace(ns);
                c.setInstanceName(id);
                // A rebalance bumps the subscription's version and heartbeats at once, but that heartbeat is
                // skipped when another one holds the client's heartbeat lock; the broker then answers
                // SUBSCRIPTION_NOT_LATEST until the next periodic heartbeat (30 s by default, 1 s here).
                c.setHeartbeatBrokerInterval(1000);
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
                    for (MessageExt m : msgs) emit(msgJson(id, m));
                    return later ? ConsumeConcurrentlyStatus.RECONSUME_LATER : ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
                });
                c.start();
                consumers.put(id, c);
                return "{\"ev\":\"ok\",\"cmd\":\"consumer\"}";
            }
            case "txproducer": {
                final String name = a[1];
                TransactionMQProducer p = new TransactionMQProducer(a[3]);
                p.setNamesrvAddr(a[2]);
                p.setInstanceName(name);
                p.setSendMsgTimeout(10000);
                checkAnswers.put(name, LocalTransactionState.UNKNOW);
                p.setTransactionListener(new TransactionListener() {
                    @Override
                    public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                        if ("HALT".equals(msg.getUserProperty("txState"))) Runtime.getRuntime().halt(3);
                        return txState(msg.getUserProperty("txState"));
                    }

                    @Override
                    public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                        LocalTransactionState answer = checkAnswers.get(name);
                        emit("{\"ev\":\"check\",\"p\":" + q(name) + ",\"topic\":" + q(msg.getTopic()) + ",\"body\":"
                            + q(new String(msg.getBody(), StandardCharsets.UTF_8)) + ",\"msgId\":" + q(msg.getMsgId())
                            + ",\"transactionId\":" + q(msg.getTransactionId()) + ",\"answer\":" + q(answer.name())
                            + "}");
                        return answer;
                    }
                });
                p.start();
                producers.put(name, p);
                return "{\"ev\":\"ok\",\"cmd\":\"txproducer\"}";
            }
            case "txsend": {
                DefaultMQProducer p = producers.get(a[1]);
                if (!(p instanceof TransactionMQProducer)) throw new IllegalArgumentException("no txproducer " + a[1]);
                Message m = new Message(a[2], a[3].getBytes(StandardCharsets.UTF_8));
                if (!"HALT".equals(a[4])) txState(a[4]);
                m.putUserProperty("txState", a[4]);
                TransactionSendResult r = ((TransactionMQProducer) p).sendMessageInTransaction(m, null);
                return "{\"ev\":\"ok\",\"cmd\":\"txsend\",\"status\":" + q(r.getSendStatus().name())
                    + ",\"state\":" + q(r.getLocalTransactionState().name()) + ",\"msgId\":" + q(r.getMsgId())
                    + ",\"transactionId\":" + q(r.getTransactionId()) + "}";
            }
            case "txcheck": {
                if (!checkAnswers.containsKey(a[1])) throw new IllegalArgumentException("no txproducer " + a[1]);
                checkAnswers.put(a[1], txState(a[2]));
                return "{\"ev\":\"ok\",\"cmd\":\"txcheck\"}";
            }
            case "litepull": {
                final String id = a[1];
                DefaultLitePullConsumer c = new DefaultLitePullConsumer(a[3]);
                c.setNamesrvAddr(a[2]);
                c.setInstanceName(id);
                c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
                c.subscribe(a[4], "*");
                c.start();
                final LitePull l = new LitePull(c);
                l.poller = new Thread(() -> {
                    while (l.running) {
                        try {
                            for (MessageExt m : c.poll(200)) emit(msgJson(id, m));
                        } catch (Throwable e) {
                            if (l.running)
                                emit("{\"ev\":\"pollError\",\"c\":" + q(id) + ",\"message\":" + q(String.valueOf(e)) + "}");
                        }
                    }
                }, "litepull-" + id);
                l.poller.setDaemon(true);
                l.poller.start();
                litePulls.put(id, l);
                return "{\"ev\":\"ok\",\"cmd\":\"litepull\"}";
            }
            case "stop": {
                DefaultMQPushConsumer c = consumers.remove(a[1]);
                if (c != null) c.shutdown();
                LitePull l = litePulls.remove(a[1]);
                if (l != null) l.stop();
                DefaultMQProducer p = producers.remove(a[1]);
                if (p != null) p.shutdown();
                checkAnswers.remove(a[1]);
                return "{\"ev\":\"ok\",\"cmd\":\"stop\",\"found\":" + (c != null || l != null || p != null) + "}";
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
