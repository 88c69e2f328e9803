/**
 * Runs a program on a real pseudo-terminal (Python's pty module: stdin, stdout and stderr are all the
 * terminal), answers one prompt when it appears, and collects what the terminal showed. For the CLI's
 * interactive paths, which only ask when stdin and stderr are terminals.
 */
import { spawn } from 'node:child_process'

export interface PtyRun {
  /** The program's exit code (-N: killed by signal N). */
  code: number
  /** Everything written to the terminal (stdout and stderr together, with the echoed answer). */
  output: string
  /** Whether the prompt appeared (and was answered). */
  asked: boolean
}

const DRIVER = String.raw`
import json, os, pty, select, sys, time
argv, env, prompt, answer, timeout = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.environ.update(env)
    os.execvp(argv[0], argv)
out, asked, deadline = b'', False, time.time() + timeout
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.2)
    if fd not in ready:
        continue
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
    if not asked and prompt.encode() in out:
        os.write(fd, (answer + '\n').encode())
        asked = True
else:
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
print(json.dumps({'code': os.waitstatus_to_exitcode(status), 'output': out.decode('utf-8', 'replace'), 'asked': asked}))
`

/** Runs `argv` on a terminal; when `prompt` shows, types `answer` and Enter. */
export function runOnPty(
  argv: string[],
  o: { env?: Record<string, string>; prompt: string; answer: string; timeoutMs?: number },
): Promise<PtyRun> {
  const args = JSON.stringify([argv, o.env ?? {}, o.prompt, o.answer, (o.timeoutMs ?? 60_000) / 1000])
  const child = spawn('python3', ['-c', DRIVER, args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve, reject) =>
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the pty driver failed (exit ${code}): ${stderr}`))
      resolve(JSON.parse(stdout) as PtyRun)
    }),
  )
}
