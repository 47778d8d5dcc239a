import java.util.*;
import org.apache.rocketmq.client.trace.*;
import org.apache.rocketmq.common.message.MessageType;

/** RocketMQ 5.3.3's additions to the trace records: the Recall record and the Order_Msg message type. */
public class EncodeTrace5 {
    static String esc(String s) { return s.replace("\u0001", "\\u0001").replace("\u0002", "\\u0002"); }
    static void out(String name, TraceContext c) {
        TraceTransferBean t = TraceDataEncoder.encoderFromContextBean(c);
        System.out.println(name + " data=" + esc(t.getTransData()));
        System.out.println(name + " keys=" + new TreeSet<>(t.getTransKey()));
    }
    public static void main(String[] a) {
        TraceContext recall = new TraceContext();
        recall.setTraceType(TraceType.Recall); recall.setTimeStamp(1700000000400L); recall.setRegionId("DefaultRegion");
        recall.setGroupName("PG"); recall.setSuccess(true);
        TraceBean b = new TraceBean(); b.setTopic("T"); b.setMsgId("M4");
        recall.setTraceBeans(new ArrayList<>(List.of(b)));
        out("recall", recall);

        TraceContext pub = new TraceContext();
        pub.setTraceType(TraceType.Pub); pub.setTimeStamp(1700000000500L); pub.setRegionId("DefaultRegion");
        pub.setGroupName("PG"); pub.setCostTime(2); pub.setSuccess(true);
        TraceBean o = new TraceBean(); o.setTopic("T"); o.setMsgId("M5"); o.setTags("t"); o.setKeys("k");
        o.setStoreHost("127.0.0.1:10911"); o.setBodyLength(1); o.setMsgType(MessageType.Order_Msg); o.setOffsetMsgId("O5");
        pub.setTraceBeans(new ArrayList<>(List.of(o)));
        out("pubOrder", pub);

        for (TraceContext c : TraceDataEncoder.decoderFromTraceDataString(
                TraceDataEncoder.encoderFromContextBean(recall).getTransData()))
            System.out.println("decoded " + c.getTraceType() + " " + c.getTimeStamp() + " " + c.getGroupName() + " "
                + c.getTraceBeans().get(0).getTopic() + " " + c.getTraceBeans().get(0).getMsgId() + " " + c.isSuccess());
    }
}
