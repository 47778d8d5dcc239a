import java.util.*;
import org.apache.rocketmq.client.trace.*;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.AccessChannel;
import org.apache.rocketmq.common.message.MessageType;

public class EncodeTrace {
    static String esc(String s) { return s.replace("\u0001", "\\u0001").replace("\u0002", "\\u0002"); }
    static void out(String name, TraceContext c) {
        TraceTransferBean t = TraceDataEncoder.encoderFromContextBean(c);
        System.out.println(name + " data=" + esc(t.getTransData()));
        System.out.println(name + " keys=" + new TreeSet<>(t.getTransKey()));
    }
    public static void main(String[] a) {
        TraceContext pub = new TraceContext();
        pub.setTraceType(TraceType.Pub); pub.setTimeStamp(1700000000123L); pub.setRegionId("DefaultRegion");
        pub.setGroupName("PG"); pub.setCostTime(7); pub.setSuccess(true);
        TraceBean b = new TraceBean(); b.setTopic("T"); b.setMsgId("7F000001000018B4AAC2000000000000"); b.setTags("TagA");
        b.setKeys("k1 k2"); b.setStoreHost("127.0.0.1:10911"); b.setBodyLength(5); b.setMsgType(MessageType.Normal_Msg);
        b.setOffsetMsgId("7F00000100002A9F0000000000000000");
        pub.setTraceBeans(new ArrayList<>(List.of(b)));
        out("pub", pub);

        TraceContext pub2 = new TraceContext();
        pub2.setTraceType(TraceType.Pub); pub2.setTimeStamp(1700000000124L); pub2.setRegionId("DefaultRegion");
        pub2.setGroupName("PG"); pub2.setCostTime(3); pub2.setSuccess(false);
        TraceBean b2 = new TraceBean(); b2.setTopic("T"); b2.setMsgId("M2"); b2.setTags(null); b2.setKeys(null);
        b2.setStoreHost("127.0.0.1:10911"); b2.setBodyLength(0); b2.setMsgType(MessageType.Delay_Msg); b2.setOffsetMsgId("O2");
        pub2.setTraceBeans(new ArrayList<>(List.of(b2)));
        out("pubNoTagsKeys", pub2);

        TraceContext sb = new TraceContext();
        sb.setTraceType(TraceType.SubBefore); sb.setTimeStamp(1700000000200L); sb.setRegionId(null);
        sb.setGroupName("CG"); sb.setRequestId("REQ1");
        TraceBean s1 = new TraceBean(); s1.setMsgId("M1"); s1.setRetryTimes(0); s1.setKeys("k1");
        TraceBean s2 = new TraceBean(); s2.setMsgId("M2"); s2.setRetryTimes(2); s2.setKeys(null);
        sb.setTraceBeans(new ArrayList<>(List.of(s1, s2)));
        out("subBefore", sb);

        TraceContext sa = new TraceContext();
        sa.setTraceType(TraceType.SubAfter); sa.setTimeStamp(1700000000200L); sa.setRegionId(null);
        sa.setGroupName("CG"); sa.setRequestId("REQ1"); sa.setCostTime(12); sa.setSuccess(false); sa.setContextCode(4);
        sa.setAccessChannel(AccessChannel.LOCAL);
        sa.setTraceBeans(new ArrayList<>(List.of(s1, s2)));
        out("subAfter", sa);

        TraceContext et = new TraceContext();
        et.setTraceType(TraceType.EndTransaction); et.setTimeStamp(1700000000300L); et.setRegionId("DefaultRegion");
        et.setGroupName("TPG");
        TraceBean e = new TraceBean(); e.setTopic("TT"); e.setMsgId("M3"); e.setTags("t"); e.setKeys("biz");
        e.setStoreHost("127.0.0.1:10911"); e.setMsgType(MessageType.Trans_msg_Commit); e.setTransactionId("M3");
        e.setTransactionState(LocalTransactionState.COMMIT_MESSAGE); e.setFromTransactionCheck(true);
        et.setTraceBeans(new ArrayList<>(List.of(e)));
        out("endTransaction", et);

        // The decoder on one concatenated body.
        String body = TraceDataEncoder.encoderFromContextBean(pub).getTransData() + TraceDataEncoder.encoderFromContextBean(sa).getTransData();
        for (TraceContext c : TraceDataEncoder.decoderFromTraceDataString(body))
            System.out.println("decoded " + c.getTraceType() + " " + c.getTraceBeans().get(0).getMsgId() + " cost=" + c.getCostTime() + " ok=" + c.isSuccess() + " ts=" + c.getTimeStamp() + " group=" + c.getGroupName());
    }
}
