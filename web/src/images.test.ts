import { describe, expect, it } from 'vitest';
import { compareTags, customizedName, defaultImage, environmentLabel, findImage, groupImages, imageOptions, minimumOf, raiseTo, sizeGiB, versionLabel } from './images';
import type { ImageNode } from './imageTypes';

/** A catalogue image as GraphQL `images` answers it. */
function image(reference: string, extra: Partial<ImageNode> = {}): ImageNode {
  const [name, tag] = reference.split(':');
  return {
    id: `id-${reference}`, name, registry: 'local', architecture: 'x86_64', tag, digest: 'sha256:0', size_bytes: 1, aliases: [],
    installed: true, installed_agents: ['a1'], canonical_name: reference, humanized_name: reference, labels: [],
    resource_limits: [], tags: [], apps: ['jupyter'], ...extra,
  };
}

const python = image('bai/python:3.11-bookworm', {
  aliases: ['python'],
  resource_limits: [{ key: 'cpu', min: '1', max: null }, { key: 'mem', min: '64m', max: null }],
});
const python312 = image('bai/python:3.12-bookworm');
const ml = image('bai/python-ml:3.11-bookworm', { resource_limits: [{ key: 'cpu', min: '1', max: null }, { key: 'mem', min: '256m', max: null }] });
const mine = image('bai/python:3.11-bookworm-customized_0a1b', {
  humanized_name: 'webimg1 (Customized)',
  tags: [{ key: 'Customized', value: '' }],
  labels: [{ key: 'ai.backend.customized-image.name', value: 'webimg1' }, { key: 'ai.backend.customized-image.owner', value: 'user:u1' }],
});

describe('the image catalogue', () => {
  it('names environments from their repository', () => {
    expect(environmentLabel('bai/python')).toBe('Python');
    expect(environmentLabel('bai/python-ml')).toBe('Python ML');
    expect(environmentLabel('cr.backend.ai/stable/pytorch')).toBe('PyTorch');
    expect(environmentLabel('lablup/ngc-tensorflow_gpu')).toBe('NGC TensorFlow GPU');
    expect(environmentLabel('my/julia-lang')).toBe('Julia Lang');
  });

  it('words versions and sorts them newest first', () => {
    expect(versionLabel('3.11-bookworm')).toBe('3.11 (bookworm)');
    expect(versionLabel('latest')).toBe('latest');
    expect(['3.9', '3.11', '3.10'].sort(compareTags)).toEqual(['3.11', '3.10', '3.9']);
  });

  it('groups general images by repository and keeps customized ones apart', () => {
    const system = image('bai/sftp:1', { labels: [{ key: 'ai.backend.role', value: 'SYSTEM' }] });
    const c = groupImages([ml, python, mine, python312, system]);
    expect(c.environments.map((e) => [e.key, e.label])).toEqual([
      ['bai/python', 'Python'],
      ['bai/python-ml', 'Python ML'],
    ]);
    expect(c.environments[0].images.map((i) => i.tag)).toEqual(['3.12-bookworm', '3.11-bookworm']);
    expect(c.customized.map(customizedName)).toEqual(['webimg1']);
    // Without the label, the humanized name says it.
    expect(customizedName({ ...mine, labels: [] })).toBe('webimg1');
  });

  it('finds the image a reference names: canonical name, alias, :latest, id', () => {
    const all = [python, ml, mine, image('bai/tool:latest')];
    expect(findImage(all, 'bai/python-ml:3.11-bookworm')).toBe(ml);
    expect(findImage(all, 'python')).toBe(python);
    expect(findImage(all, 'bai/tool')?.canonical_name).toBe('bai/tool:latest');
    expect(findImage(all, mine.id)).toBe(mine);
    expect(findImage(all, '')).toBeUndefined();
    expect(findImage(all, 'nope')).toBeUndefined();
  });

  it('chooses python first, else the first environment', () => {
    expect(defaultImage([ml, python312, python])).toBe(python);
    expect(defaultImage([ml, python312])).toBe(python312);
    expect(defaultImage([ml])).toBe(ml);
    expect(defaultImage([mine])).toBeUndefined();
  });

  it("reads an image's minimum resources from its labels", () => {
    expect(minimumOf(python)).toEqual({ cpu: 1, memGiB: 0.0625 });
    expect(minimumOf(ml)).toEqual({ cpu: 1, memGiB: 0.25 });
    expect(minimumOf(undefined)).toEqual({ cpu: 0, memGiB: 0 });
    expect(minimumOf(image('x/y:1', { resource_limits: [{ key: 'cpu', min: 'lots', max: null }, { key: 'mem', min: null, max: '1g' }] }))).toEqual({ cpu: 0, memGiB: 0 });
    expect(sizeGiB('64m')).toBe(0.0625);
    expect(sizeGiB('256m')).toBe(0.25);
    expect(sizeGiB('1g')).toBe(1);
    expect(sizeGiB('1.5G')).toBe(1.5);
    expect(sizeGiB('lots')).toBeNull();
  });

  it('raises a value to a minimum on the slider steps', () => {
    expect(raiseTo(0.5, 1, 0.5)).toBe(1);
    expect(raiseTo(2, 1, 0.5)).toBe(2);
    expect(raiseTo(0.25, 0.3, 0.25)).toBe(0.5);
    expect(raiseTo(0.1, 0.25, 0.25)).toBe(0.25);
  });

  it('suggests the catalogue for a free image field', () => {
    expect(imageOptions([mine, python]).map((o) => o.value)).toEqual(['bai/python:3.11-bookworm', 'bai/python:3.11-bookworm-customized_0a1b']);
    expect(imageOptions([mine])[0].label).toContain('webimg1 (Customized)');
  });
});
