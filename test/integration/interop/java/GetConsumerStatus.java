import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;
import org.apache.commons.cli.PosixParser;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.srvutil.ServerUtil;
import org.apache.rocketmq.tools.command.offset.GetConsumerStatusCommand;

/**
 * RocketMQ 4.9.8's own `mqadmin getConsumerStatus` sub command, run as MQAdminStartup runs a sub command:
 * the class ships in the tools module but 4.9.8's MQAdminStartup does not register it.
 */
public class GetConsumerStatus {
    public static void main(String[] args) throws Exception {
        GetConsumerStatusCommand cmd = new GetConsumerStatusCommand();
        Options options = ServerUtil.buildCommandlineOptions(new Options());
        CommandLine line = ServerUtil.parseCmdLine("mqadmin " + cmd.commandName(), args,
            cmd.buildCommandlineOptions(options), new PosixParser());
        if (line == null) System.exit(2);
        if (line.hasOption('n')) System.setProperty(MixAll.NAMESRV_ADDR_PROPERTY, line.getOptionValue('n'));
        cmd.execute(line, options, null);
        System.exit(0);
    }
}
