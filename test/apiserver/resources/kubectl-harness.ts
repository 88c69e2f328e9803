/**
 * Running kubectl (v1.32, /usr/bin/kubectl) against a test server: a private kubeconfig, HOME and
 * discovery cache in a temp dir; `run` for one command (stdout, or a rejection carrying stderr), and
 * `background` for long-running ones (get -w, wait) whose output is awaited with `until`.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

export const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl'
const execFileP = promisify(execFile)

export interface Background {
  child: ChildProcess
  output(): string
  /** Waits until the output satisfies `pred` (15 s at most). */
  until(pred: (out: string) => boolean, what: string): Promise<void>
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>
}

export class KubectlHarness {
  private readonly children: ChildProcess[] = []
  env: NodeJS.ProcessEnv = {}

  private constructor(readonly dir: string) {}

  static async start(server: string, namespace = 'default'): Promise<KubectlHarness> {
    const h = new KubectlHarness(await mkdtemp(join(tmpdir(), 'kvlog-kubectl-')))
    const kubeconfig = join(h.dir, 'kubeconfig')
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: kvlog',
        '  cluster:',
        `    server: ${server}`,
        'contexts:',
        '- name: kvlog',
        '  context:',
        '    cluster: kvlog',
        `    namespace: ${namespace}`,
        'current-context: kvlog',
        '',
      ].join('\n'),
    )
    h.env = { ...process.env, KUBECONFIG: kubeconfig, HOME: h.dir }
    return h
  }

  /** Runs kubectl; resolves with stdout, or rejects with an error carrying stderr. */
  async run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
    return (await this.runBoth(args, env)).stdout
  }

  /** Runs kubectl; resolves with stdout and stderr (where -v=8 logs requests and answers). */
  async runBoth(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
    return execFileP(KUBECTL, ['--cache-dir', join(this.dir, 'cache'), ...args], { env: { ...this.env, ...env }, timeout: 20_000 })
  }

  /** The stderr of a kubectl command that must fail. */
  async fails(args: string[]): Promise<string> {
    try {
      await this.run(args)
    } catch (err) {
      return (err as { stderr: string }).stderr
    }
    throw new Error(`kubectl ${args.join(' ')} succeeded`)
  }

  background(args: string[]): Background {
    const child = spawn(KUBECTL, ['--cache-dir', join(this.dir, 'cache'), ...args], { env: this.env })
    this.children.push(child)
    let out = ''
    child.stdout!.on('data', (d) => (out += d))
    child.stderr!.on('data', (d) => (out += d))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    return {
      child,
      exited,
      output: () => out,
      until: async (pred, what) => {
        const deadline = Date.now() + 15_000
        while (!pred(out)) {
          if (Date.now() > deadline) throw new Error(`kubectl ${args.join(' ')}: no ${what}; output: ${out}`)
          await new Promise((r) => setTimeout(r, 50))
        }
      },
    }
  }

  async file(name: string, text: string): Promise<string> {
    const path = join(this.dir, name)
    await writeFile(path, text, { mode: 0o755 })
    return path
  }

  async stop(): Promise<void> {
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill()
    await rm(this.dir, { recursive: true, force: true })
  }
}
