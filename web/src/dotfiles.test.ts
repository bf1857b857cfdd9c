import { describe, expect, it } from 'vitest';
import { checkPath, checkPermission, fieldOf, preview } from './dotfiles';

describe('dotfile rules', () => {
  it('keeps paths inside the home directory', () => {
    expect(checkPath('.vimrc')).toEqual({ path: '.vimrc' });
    expect(checkPath('~/.bashrc')).toEqual({ path: '.bashrc' });
    expect(checkPath('/home/work/.config//nvim/init.vim')).toEqual({ path: '.config/nvim/init.vim' });
    for (const bad of ['', '/etc/profile', '../x', '.config/../../x', '/home/work', '~root/x', '/home/workx']) {
      expect('error' in checkPath(bad), bad).toBe(true);
    }
  });
  it('takes octal modes', () => {
    expect(checkPermission('')).toBeNull();
    expect(checkPermission('600')).toBeNull();
    expect(checkPermission('0755')).toBeNull();
    expect(checkPermission('999')).not.toBeNull();
    expect(checkPermission('rwx')).not.toBeNull();
  });
  it('places server refusals beside their field', () => {
    expect(fieldOf('permission "9" is not a file mode')).toBe('permission');
    expect(fieldOf('dotfiles may hold at most 64 KiB together')).toBe('data');
    expect(fieldOf('a dotfile at ".vimrc" exists')).toBe('path');
  });
  it('shows the first line', () => {
    expect(preview('set nu\n')).toBe('set nu');
    expect(preview('a\nb')).toBe('a…');
  });
});
