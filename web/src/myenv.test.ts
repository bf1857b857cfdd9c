import { describe, expect, it } from 'vitest';
import { ApiError } from './api';
import type { ImageNode } from './imageTypes';
import { baseImageOf, countText, imageSize, isQuotaRefusal, limitMessage, originOf, ownedBy, sortByName } from './myenv';

const image = (name: string, email: string | null, extra: Partial<ImageNode> = {}): ImageNode => ({
  id: `id-${name}`, name: 'bai/python', registry: 'local', architecture: 'x86_64', tag: '3.11-bookworm-customized_0123abcd', digest: '',
  size_bytes: 0, aliases: [], installed: true, installed_agents: [], canonical_name: 'bai/python:3.11-bookworm-customized_0123abcd',
  humanized_name: `${name} (Customized)`,
  labels: [{ key: 'ai.backend.customized-image.name', value: name }, ...(email ? [{ key: 'ai.backend.customized-image.user.email', value: email }] : [])],
  resource_limits: [], tags: [{ key: 'Customized', value: '' }], apps: [], ...extra,
});

describe('My Environments', () => {
  it('tells the image a customized one was made from by its reference', () => {
    expect(baseImageOf('bai/python:3.11-bookworm-customized_0123abcd')).toBe('bai/python:3.11-bookworm');
    expect(baseImageOf('localhost:5000/bai/python:latest-customized_ff')).toBe('localhost:5000/bai/python:latest');
    expect(baseImageOf('bai/python:3.11-bookworm')).toBeNull();
    expect(baseImageOf('localhost:5000/bai/python')).toBeNull();
    expect(originOf(image('webimg1', 'user@bai.local'))).toBe('a session of bai/python:3.11-bookworm, by user@bai.local');
    expect(originOf(image('x', null, { canonical_name: 'imported:v1' }))).toBe('a session');
  });

  it('sizes in words, counts against the limit', () => {
    expect(imageSize(image('a', null, { size_bytes: 604_000_000 }))).toBe('576.0 MiB');
    expect(imageSize(image('a', null))).toBe('-');
    expect(countText(1, 3)).toBe('1 of 3 customized images');
    expect(countText(1, 1)).toBe('1 of 1 customized image');
    expect(countText(2, null)).toBe('2 customized images');
  });

  it('the commit dialog speaks of the limit only once it is reached', () => {
    expect(limitMessage(2, 3)).toBeNull();
    expect(limitMessage(3, null)).toBeNull();
    expect(limitMessage(3, 3)).toBe('You have 3 of 3 customized images; remove one in My Environments');
    expect(limitMessage(4, 3)).toBe('You have 4 of 3 customized images; remove one in My Environments');
    expect(limitMessage(0, 0)).toBe('Your resource policy allows no customized images.');
    expect(isQuotaRefusal(new ApiError(400, 'Quota exceeded.', 'you have reached …', 'https://api.backend.ai/probs/quota-exceeded'))).toBe(true);
    expect(isQuotaRefusal(new ApiError(400, 'Bad', 'you have reached your customized image count quota (current: 3, limit: 3)'))).toBe(true);
    expect(isQuotaRefusal(new ApiError(400, 'Bad', 'name too short'))).toBe(false);
    expect(isQuotaRefusal(null)).toBe(false);
  });

  it("lists the user's own images by name (an admin is listed everyone's)", () => {
    const all = [image('zeta', 'user@bai.local'), image('alpha', 'USER@bai.local'), image('other', 'admin@bai.local'), image('unlabelled', null)];
    expect(sortByName(ownedBy(all, 'user@bai.local')).map((i) => i.labels[0].value)).toEqual(['alpha', 'unlabelled', 'zeta']);
  });
});
