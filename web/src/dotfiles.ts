// The dotfiles the Settings page edits: the rules the server enforces (paths inside the home,
// octal modes), checked here too so a mistake shows beside its field before anything is sent,
// and a server refusal placed beside the field it concerns.
import type { Schema } from './api';

export type Dotfile = Schema<'DotfileItem'>;
export type DotfileField = 'path' | 'permission' | 'data';

export const HOME = '/home/work';

/** The path relative to the home, or the reason it cannot be a dotfile's. */
export function checkPath(raw: string): { path: string } | { error: string } {
  const p = raw.trim();
  if (!p) return { error: 'Give a path, e.g. .vimrc' };
  let rel = p;
  if (p.startsWith('~/')) rel = p.slice(2);
  else if (p === HOME || p.startsWith(`${HOME}/`)) rel = p.slice(HOME.length + 1);
  else if (p.startsWith('/') || p.startsWith('~')) return { error: `The path is outside the home directory: give one relative to ${HOME}` };
  const parts = rel.split('/').filter((c) => c !== '' && c !== '.');
  if (parts.includes('..')) return { error: "The path may not climb out with '..'" };
  if (parts.length === 0) return { error: 'Give a file in the home directory, not the directory itself' };
  return { path: parts.join('/') };
}

/** An error for a permission that is not three octal digits (blank: the default 644). */
export function checkPermission(raw: string): string | null {
  const p = raw.trim();
  if (!p) return null;
  return /^0?[0-7]{3}$/.test(p) ? null : 'Give the mode as three octal digits, e.g. 644';
}

/** Which field a server refusal is about. */
export function fieldOf(msg: string): DotfileField {
  const m = msg.toLowerCase();
  if (m.includes('permission') || m.includes('file mode')) return 'permission';
  if (m.includes('kib') || m.includes('nul byte') || m.includes('at most')) return 'data';
  return 'path';
}

/** The first line of a dotfile, short, for the table. */
export function preview(data: string): string {
  const lines = data.split('\n');
  const first = lines[0] ?? '';
  const more = first.length > 40 || lines.slice(1).some((l) => l !== '');
  return first.slice(0, 40) + (more ? '…' : '');
}
