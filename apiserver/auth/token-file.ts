/**
 * Static bearer tokens from a file in kube-apiserver's --token-auth-file format: one CSV line per token,
 * `token,user,uid[,"group1,group2"]` (groups are read and ignored: permissions come from the user's
 * roles). Blank lines and lines starting with # are skipped. A token names a user; auth checks treat it
 * like a token from Authenticate, except that it never expires (remove the line and restart to end it).
 */
import { readFile } from 'node:fs/promises'
import { KvlogError } from '../../log/errors.js'

export async function loadTokenFile(path: string): Promise<Map<string, string>> {
  const tokens = new Map<string, string>()
  if (path === '') return tokens
  const text = await readFile(path, 'utf8').catch((err: Error) => {
    throw new KvlogError('INVALID_ARGUMENT', `tokenAuthFile: cannot read ${path}: ${err.message}`, { field: 'tokenAuthFile' })
  })
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '' || line.trimStart().startsWith('#')) return
    const [token, user] = line.split(',').map((f) => f.trim())
    if (token === undefined || token === '' || user === undefined || user === '') {
      throw new KvlogError('INVALID_ARGUMENT', `tokenAuthFile: line ${i + 1}: expected token,user,uid[,"groups"]`, {
        field: 'tokenAuthFile',
      })
    }
    tokens.set(token, user)
  })
  return tokens
}
