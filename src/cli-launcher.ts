/**
 * `npx rocketmq-ts broker` (or an npm script) runs the broker as npm → sh → node. A SIGTERM to npm
 * ends npm and the shell without passing the signal on, so the broker would run on as an orphan,
 * holding its port and store, after a process manager or a container runtime stopped "it". A broker
 * started through npm therefore watches its launcher and shuts down once the launcher is gone.
 */
import { readFileSync } from 'node:fs';

/** Whether npm (a script, `npx` or `npm exec`) started this process: npm sets these for what it runs. */
export function startedThroughNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.npm_lifecycle_event !== undefined || env.npm_execpath !== undefined || env.npm_command !== undefined;
}

/** The parent of `pid` where /proc tells it (Linux); undefined elsewhere. */
function parentOf(pid: number): number | undefined {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) && ppid > 1 ? ppid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by another user
  }
}

/**
 * Calls `onGone` once when the launcher is gone: this process's parent changed (it died and the
 * process was re-parented), the parent's parent died (npm killed while its shell waits on), or the IPC
 * channel to the parent closed. Checks once per `intervalMs` on an unref'd timer, so it never keeps the
 * process alive. Returns a function that stops watching.
 */
export function watchLauncher(onGone: () => void, intervalMs = 1000): () => void {
  const parent = process.ppid;
  const grandparent = parentOf(parent);
  let done = false;
  const gone = (): void => {
    if (done) return;
    stop();
    onGone();
  };
  const timer = setInterval(() => {
    if (process.ppid !== parent || (grandparent !== undefined && !alive(grandparent))) gone();
  }, intervalMs);
  timer.unref();
  if (process.channel) process.once('disconnect', gone);
  function stop(): void {
    done = true;
    clearInterval(timer);
    process.off('disconnect', gone);
  }
  return stop;
}
