#!/usr/bin/env node
/**
 * The `rocketmq-ts` command. Subcommands:
 *   rocketmq-ts broker --store DIR [--port N] [--host H] [--broker-name N] [--cluster-name N]
 *                      [--access-token-file F] [--sync-flush] [--no-auto-create-topic] [--trace-topic-enable]
 *                      [--channel-expired-timeout-ms N] [--watch-renew-grace-ms N]
 *                      [--message-delay-level "1s 5s ..."] [--dlq-readable]
 *                      [--log-level debug|info|warn|error|silent]
 *                      [--remoting-port N] [--config broker.conf] [--acl-file PATH]
 *                      [--tls-cert F --tls-key F [--tls-mode M]]
 * Prints `rocketmq-ts broker listening on <address>` once the broker serves, and shuts down cleanly on
 * SIGINT / SIGTERM (exit code 0), or when started through npm (`npx`) once npm is gone (cli-launcher.ts).
 * Bad flags exit with code 2 and a message on stderr.
 *   rocketmq-ts --version
 *   rocketmq-ts <admin command> [flags] [--endpoints URL] [--json]   (cli-admin.ts: mqadmin's names and flags)
 */
import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Broker, type BrokerOptions } from './broker/index.js';
import { BrokerConfFileError, brokerOptionsFromConf } from './broker/broker-conf-file.js';
import { TLS_MODES, type TlsMode } from './broker/broker-tls.js';
import { LOG_LEVELS, createLineLogger, isLogLevel } from './common/line-logger.js';
import { UsageError as AdminUsageError, adminUsage, isAdminCommand, runAdminCommand } from './cli-admin.js';
import { startedThroughNpm, watchLauncher } from './cli-launcher.js';

const USAGE = `Usage: rocketmq-ts <command> [options]

Commands:
  broker    run the reference broker
  (and the admin commands below; rocketmq-ts --version prints the version)

rocketmq-ts broker options:
  --config FILE            settings in RocketMQ's broker.conf form (key=value lines):
                           every broker and store option by name, e.g.
                           remotingMaxConnectionsPerAddress=200 or maxMessageSize=1048576;
                           flags given on the command line win
  --store DIR              store directory (required, here or as storePath in --config)
  --port N                 port to listen on (default 8081; 0 picks a free one)
  --host H                 interface to bind (default 127.0.0.1)
  --advertised-address URL the address clients are told to use (default
                           http://<host>:<port>, 127.0.0.1 for 0.0.0.0)
  --broker-name NAME       broker name (default broker-a)
  --cluster-name NAME      cluster name (default DefaultCluster)
  --access-token-file F    require "Authorization: Bearer <token>" on every call,
                           the token being the content of file F (trimmed);
                           or set ROCKETMQ_TS_ACCESS_TOKEN in the environment
  --access-token TOKEN     the same with the token on the command line (discouraged:
                           other users of the machine see it in ps)
  --sync-flush             fsync every message before acknowledging it
  --no-auto-create-topic   do not create topics on first send
  --trace-topic-enable     create the message-trace topic RMQ_SYS_TRACE_TOPIC at start
  --channel-expired-timeout-ms N
                           evict a consumer that has not heartbeated for N ms
                           (default 120000, as RocketMQ)
  --watch-renew-grace-ms N evict a consumer whose membership watch closed and was
                           not renewed within N ms (default 3000)
  --message-delay-level L  delay levels, e.g. "1s 5s 10s 30s 1m ... 2h" (units
                           ms, s, m, h, d; default RocketMQ's 18 levels)
  --dlq-readable           make %DLQ% topics readable when they are created
  --log-level LEVEL        debug, info, warn, error or silent (default info): JSON
                           lines on stderr, e.g. every action of store recovery
  --remoting-port N        also serve RocketMQ's TCP remoting protocol on port N
                           (0 picks a free one): RocketMQ's clients, mqadmin and
                           ali-ons use 127.0.0.1:N as their name server (default off)
  --tls-cert F             serve TLS with the PEM certificate in file F (with --tls-key)
  --tls-key F              the certificate's PEM private key (unencrypted)
  --tls-mode M             disabled, permissive or enforcing (default enforcing; as
                           RocketMQ's tls.server.mode): permissive serves TLS and plain
                           on the remoting port; HTTP is HTTPS only whenever TLS is on
  --acl-file PATH          RocketMQ's plain ACL: every request on both listeners must
                           be signed by an account of this plain_acl.yml (re-read
                           when it changes; a bad file stops the start)
  --metrics-port N         serve Prometheus metrics at GET /metrics on port N
                           (RocketMQ 5's metric names; 0 picks a free one; default off)
  --metrics-host HOST      address the metrics port binds (default 127.0.0.1)
  -h, --help               show this help
`;

class UsageError extends Error {}

function parseMs(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw new UsageError(`--${flag} must be a whole number of ms, got '${v}'`);
  return Number(v);
}

function parsePort(v: string | undefined, flag = 'port'): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) > 65535)
    throw new UsageError(`--${flag} must be a number from 0 to 65535, got '${v}'`);
  return Number(v);
}

/**
 * The access token: from --access-token-file, else ROCKETMQ_TS_ACCESS_TOKEN, else --access-token (which
 * every user of the machine can read in `ps`, so it earns a warning).
 */
function accessToken(file: string | undefined, flag: string | undefined): string | undefined {
  if (file !== undefined && flag !== undefined)
    throw new UsageError('give --access-token-file or --access-token, not both');
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new UsageError(`--access-token-file: cannot read '${file}': ${(e as Error).message}`);
    }
    const token = text.trim();
    if (token.length === 0) throw new UsageError(`--access-token-file: '${file}' is empty`);
    if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) {
      process.stderr.write(`rocketmq-ts broker: warning: ${file} is readable by other users (chmod 600 it)\n`);
    }
    return token;
  }
  const env = process.env.ROCKETMQ_TS_ACCESS_TOKEN;
  if (env !== undefined && env !== '' && flag === undefined) return env;
  if (flag !== undefined) {
    process.stderr.write(
      'rocketmq-ts broker: warning: --access-token is visible to every user in the process list; ' +
        'use ROCKETMQ_TS_ACCESS_TOKEN or --access-token-file\n',
    );
  }
  return flag;
}

/** The settings of a `--config` file; a file that cannot be read or a bad line is a usage error. */
function readBrokerConf(file: string): Partial<BrokerOptions> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--config: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return brokerOptionsFromConf(text, file);
  } catch (e) {
    if (e instanceof BrokerConfFileError) throw new UsageError(`--config: ${e.message}`);
    throw e;
  }
}

/** `o` without its undefined entries, so that a flag not given leaves the --config file's value. */
function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** --tls-cert, --tls-key and --tls-mode as the broker's `tls` option (undefined: no TLS). */
function tlsOption(
  cert: string | undefined,
  key: string | undefined,
  mode: string | undefined,
): { cert: string; key: string; mode: TlsMode } | undefined {
  if (mode !== undefined && !(TLS_MODES as readonly string[]).includes(mode))
    throw new UsageError(`--tls-mode must be one of ${TLS_MODES.join(', ')}, got '${mode}'`);
  if (mode === 'disabled') return undefined;
  if (cert === undefined && key === undefined) {
    if (mode !== undefined) throw new UsageError(`--tls-mode ${mode} needs --tls-cert and --tls-key`);
    return undefined;
  }
  if (cert === undefined || key === undefined) throw new UsageError('give both --tls-cert and --tls-key');
  return { cert, key, mode: (mode ?? 'enforcing') as TlsMode };
}

async function runBroker(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      store: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'advertised-address': { type: 'string' },
      'broker-name': { type: 'string' },
      'cluster-name': { type: 'string' },
      'access-token': { type: 'string' },
      'access-token-file': { type: 'string' },
      'sync-flush': { type: 'boolean' },
      'no-auto-create-topic': { type: 'boolean' },
      'trace-topic-enable': { type: 'boolean' },
      'channel-expired-timeout-ms': { type: 'string' },
      'watch-renew-grace-ms': { type: 'string' },
      'message-delay-level': { type: 'string' },
      'dlq-readable': { type: 'boolean' },
      'log-level': { type: 'string' },
      'remoting-port': { type: 'string' },
      config: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'tls-mode': { type: 'string' },
      'acl-file': { type: 'string' },
      'metrics-port': { type: 'string' },
      'metrics-host': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const conf = values.config === undefined ? {} : readBrokerConf(values.config);
  const storePath = values.store ?? conf.storePath;
  if (!storePath) throw new UsageError('--store DIR is required');
  const level = values['log-level'] ?? 'info';
  if (!isLogLevel(level)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got '${level}'`);
  const logger = createLineLogger(level, (line) => process.stderr.write(line));
  const tls = tlsOption(values['tls-cert'], values['tls-key'], values['tls-mode']);
  const broker = await Broker.start({
    ...conf,
    ...definedOnly({
      port: parsePort(values.port),
      host: values.host,
      advertisedAddress: values['advertised-address'],
      brokerName: values['broker-name'],
      clusterName: values['cluster-name'],
      accessToken: accessToken(values['access-token-file'], values['access-token']),
      autoCreateTopicEnable: values['no-auto-create-topic'] ? false : undefined,
      channelExpiredTimeoutMs: parseMs('channel-expired-timeout-ms', values['channel-expired-timeout-ms']),
      watchRenewGraceMs: parseMs('watch-renew-grace-ms', values['watch-renew-grace-ms']),
      dlqReadable: values['dlq-readable'] ? true : undefined,
      remotingPort: parsePort(values['remoting-port'], 'remoting-port'),
      aclFile: values['acl-file'],
      traceTopicEnable: values['trace-topic-enable'] ? true : undefined,
      metricsPort: parsePort(values['metrics-port'], 'metrics-port'),
      metricsHost: values['metrics-host'],
    }),
    storePath,
    logger,
    ...(tls ? { tls } : {}),
    store: {
      ...conf.store,
      ...(values['sync-flush'] ? { flushDiskType: 'SYNC_FLUSH' as const } : {}),
      ...(values['message-delay-level'] ? { messageDelayLevel: values['message-delay-level'] } : {}),
    },
  });
  const bound = broker.options.host.includes(':') ? `[${broker.options.host}]` : broker.options.host;
  const listening = `${tls ? 'https' : 'http'}://${bound}:${broker.port}`;
  await new Promise<void>((resolve) => {
    let unwatch = (): void => undefined;
    const stop = (why: string): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      unwatch();
      process.stderr.write(`rocketmq-ts broker: ${why}, shutting down\n`);
      broker.shutdown().then(resolve, (e: unknown) => {
        process.stderr.write(`rocketmq-ts broker: shutdown failed: ${(e as Error).message}\n`);
        process.exitCode = 1;
        resolve();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (startedThroughNpm()) unwatch = watchLauncher(() => stop('its launcher (npm) exited'));
    // Only now say where it listens: whoever reads these lines may signal at once, and a signal that
    // arrived before the handlers were installed would kill the process without a clean shutdown.
    process.stdout.write(`rocketmq-ts broker listening on ${listening}\n`);
    if (listening !== broker.address) process.stdout.write(`rocketmq-ts broker clients connect to ${broker.address}\n`);
    if (broker.remotingAddress !== undefined) {
      const remoting = `${bound}:${broker.remotingPort}`;
      process.stdout.write(`rocketmq-ts broker remoting listening on ${remoting}\n`);
      if (remoting !== broker.remotingAddress)
        process.stdout.write(`rocketmq-ts broker remoting clients connect to ${broker.remotingAddress}\n`);
    }
    if (broker.metricsAddress !== undefined)
      process.stdout.write(`rocketmq-ts broker metrics at ${broker.metricsAddress}/metrics\n`);
  });
}

/** The package's version, from the package.json beside dist/ (or src/). */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function runAdmin(command: Parameters<typeof runAdminCommand>[0], args: string[]): Promise<number> {
  try {
    return await runAdminCommand(command, args);
  } catch (e) {
    const err = e as Error & { code?: string };
    const usage =
      e instanceof AdminUsageError || (typeof err.code === 'string' && err.code.startsWith('ERR_PARSE_ARGS'));
    // A script that asked for JSON reads the failure as JSON too (on stdout, where it reads results),
    // even when the flags themselves could not be parsed.
    if (args.includes('--json')) {
      const code = e instanceof AdminUsageError ? 'ERR_USAGE' : typeof err.code === 'string' ? err.code : 'ERR_UNKNOWN';
      process.stdout.write(JSON.stringify({ error: { code, message: err.message } }, null, 2) + '\n');
    } else {
      process.stderr.write(`rocketmq-ts ${command}: ${err.message}\n`);
      if (usage) process.stderr.write(`Run \`rocketmq-ts ${command} --help\` for the options.\n`);
    }
    return usage || err.code === 'ERR_INVALID_ARGUMENT' ? 2 : 1;
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE + '\n' + adminUsage());
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (isAdminCommand(command)) return runAdmin(command, rest);
  if (command !== 'broker') {
    process.stderr.write(`rocketmq-ts: unknown command '${command}'\n\n${USAGE}`);
    return 2;
  }
  try {
    await runBroker(rest);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    const err = e as Error & { code?: string };
    const usage = e instanceof UsageError || (typeof err.code === 'string' && err.code.startsWith('ERR_PARSE_ARGS'));
    process.stderr.write(`rocketmq-ts broker: ${err.message}\n`);
    if (usage) process.stderr.write('Run `rocketmq-ts broker --help` for the options.\n');
    return usage || err.code === 'ERR_INVALID_ARGUMENT' ? 2 : 1;
  }
}

/**
 * Exits once everything written to stdout and stderr has been handed to the OS: pipes are asynchronous
 * on macOS, where a bare `process.exit` can cut a long `--json` document short.
 */
function exitAfterOutput(code: number): void {
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

main(process.argv.slice(2)).then(exitAfterOutput, (e: unknown) => {
  process.stderr.write(`rocketmq-ts: ${(e as Error)?.message ?? String(e)}\n`);
  exitAfterOutput(1);
});
