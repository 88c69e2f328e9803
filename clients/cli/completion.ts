/**
 * `kvlog completion bash|zsh`: a shell completion script, generated from the command table so it never
 * lags behind it. Completes command names, each command's flags (with the global ones) and its verbs
 * (lease grant|revoke|..., snapshot save|restore, cursor list|commit|delete); files after --file,
 * --data-dir and txn. Install: `source <(kvlog completion bash)`, or for zsh write it to a directory on
 * $fpath as _kvlog.
 */
import { UsageError } from './args.js'
import { GLOBAL_FLAGS } from './help.js'

export interface CompletionCommand {
  flags: Record<string, unknown>
}

const VERBS: Record<string, string[]> = {
  lease: ['grant', 'revoke', 'list', 'ttl', 'keep-alive'],
  snapshot: ['save', 'restore'],
  cursor: ['list', 'commit', 'delete'],
  completion: ['bash', 'zsh'],
}

const FILE_FLAGS = ['--file', '--data-dir', '--config']

export function completionScript(shell: string | undefined, commands: Record<string, CompletionCommand>): string {
  const names = ['serve', 'version', ...Object.keys(commands)].sort()
  const flagsOf = (name: string) =>
    [...Object.keys(commands[name]?.flags ?? {}), ...Object.keys(GLOBAL_FLAGS)].map((f) => `--${f}`).join(' ')
  if (shell === 'bash') return bash(names, flagsOf)
  if (shell === 'zsh') return zsh(names, flagsOf)
  throw new UsageError(`completion: expected bash or zsh, got ${JSON.stringify(shell ?? '')}`)
}

function bash(names: string[], flagsOf: (name: string) => string): string {
  const cases = names.map((n) => `    ${n}) flags="${flagsOf(n)}"; verbs="${(VERBS[n] ?? []).join(' ')}" ;;`).join('\n')
  return `# kvlog completion for bash: source <(kvlog completion bash)
_kvlog() {
  local cur prev cmd flags verbs
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmd="\${COMP_WORDS[1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${names.join(' ')} --help --version" -- "$cur"))
    return
  fi
  case "$prev" in
    ${FILE_FLAGS.join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  case "$cmd" in
${cases}
    *) flags=""; verbs="" ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$verbs" ]; then
    COMPREPLY=($(compgen -W "$verbs" -- "$cur"))
  elif [ "$cmd" = txn ] || [ "$cmd" = snapshot ]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _kvlog kvlog
`
}

function zsh(names: string[], flagsOf: (name: string) => string): string {
  const cases = names.map((n) => `    ${n}) flags=(${flagsOf(n)}); verbs=(${(VERBS[n] ?? []).join(' ')}) ;;`).join('\n')
  return `#compdef kvlog
# kvlog completion for zsh: kvlog completion zsh > "\${fpath[1]}/_kvlog" (then restart zsh)
_kvlog() {
  local -a flags verbs
  if (( CURRENT == 2 )); then
    compadd -- ${names.join(' ')} --help --version
    return
  fi
  case "\${words[CURRENT-1]}" in
    ${FILE_FLAGS.join('|')}) _files; return ;;
  esac
  case "\${words[2]}" in
${cases}
  esac
  if [[ "\${words[CURRENT]}" == -* ]]; then
    compadd -- $flags
  elif (( CURRENT == 3 )) && (( \${#verbs} > 0 )); then
    compadd -- $verbs
  elif [[ "\${words[2]}" == (txn|snapshot) ]]; then
    _files
  fi
}
if [[ "\${funcstack[1]}" == _kvlog ]]; then _kvlog "$@"; else compdef _kvlog kvlog; fi
`
}
