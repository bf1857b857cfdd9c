import { describe, expect, it } from 'vitest';
import { body, completeSettings, DEFAULTS, LaunchSettings, presetAccelerator, problems, trimHistory, withImage } from './launch';
import type { ImageNode } from './imageTypes';

const ml: ImageNode = {
  id: 'i1', name: 'bai/python-ml', registry: 'local', architecture: 'x86_64', tag: '3.11-bookworm', digest: '', size_bytes: 0, aliases: [],
  installed: true, installed_agents: [], canonical_name: 'bai/python-ml:3.11-bookworm', humanized_name: 'bai/python-ml:3.11-bookworm',
  labels: [], resource_limits: [{ key: 'cpu', min: '2', max: null }, { key: 'mem', min: '1536m', max: null }], tags: [], apps: [],
};
const max = { cpu: 8, memGiB: 16 };

describe('the launch settings', () => {
  it("choosing an image launches its canonical name and raises CPU and memory to its minimum", () => {
    const s = withImage({ ...DEFAULTS, cpu: 0.5, memGiB: 1 }, ml);
    expect(s.environment).toBe('bai/python-ml:3.11-bookworm');
    expect(s.cpu).toBe(2);
    expect(s.memGiB).toBe(1.5);
    expect(body(s, null).image).toBe('bai/python-ml:3.11-bookworm');
    // More than the minimum stays.
    expect(withImage({ ...DEFAULTS, cpu: 4, memGiB: 8 }, ml)).toMatchObject({ cpu: 4, memGiB: 8 });
    // A free image reference is launched instead.
    expect(body({ ...s, image: 'bai/python:3.11-bookworm' }, null).image).toBe('bai/python:3.11-bookworm');
  });

  it('refuses resources below the image minimum, and an image gone from the catalogue', () => {
    const min = { cpu: 1, memGiB: 0.25 };
    const low = problems({ ...DEFAULTS, cpu: 0.5, memGiB: 0.25 }, max, null, { min, problem: null });
    expect(low).toEqual([{ step: 1, text: 'This image needs at least 1 CPU core.' }]);
    expect(problems({ ...DEFAULTS, cpu: 1, memGiB: 1 }, max, null, { min, problem: null })).toEqual([]);
    expect(problems(DEFAULTS, max, null, { min, problem: 'gone' })).toEqual([{ step: 1, text: 'gone' }]);
    // Without a catalogue, nothing is known of the image.
    expect(problems({ ...DEFAULTS, cpu: 0.5 }, max, null)).toEqual([]);
  });
});

describe('Recent History', () => {
  it("an entry kept before Inference made services gets that page's defaults", () => {
    const { model: _m, replicas: _r, openToPublic: _p, ...old } = { ...DEFAULTS, name: 'kept' };
    const s: LaunchSettings = completeSettings(old);
    expect(s).toMatchObject({ name: 'kept', model: '', replicas: 1, openToPublic: false });
  });

  const entry = (id: string, pinned = false) => ({ id, label: id, pinned, at: '', settings: DEFAULTS });
  it('keeps the five most recent, pinned ones first and whatever their age', () => {
    const h = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((id) => entry(id, id === 'g'));
    expect(trimHistory(h).map((e) => e.id)).toEqual(['g', 'a', 'b', 'c', 'd']);
    const allPinned = ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => entry(id, true));
    expect(trimHistory(allPinned)).toHaveLength(6);
    const tooMany = Array.from({ length: 25 }, (_, i) => entry(`p${i}`, true));
    expect(trimHistory(tooMany)).toHaveLength(20);
  });

  it("a preset's GPU becomes the accelerator setting, in the group's slot", () => {
    const gpu = { cpu: '4', mem: '17179869184', 'cuda.shares': '0.5' };
    expect(presetAccelerator(gpu, 'cuda.shares')).toBe(0.5);
    // A preset for another kind of agent still shows what it asks for.
    expect(presetAccelerator({ cpu: '1', mem: '1', 'cuda.device': '2' }, 'cuda.shares')).toBe(2);
    expect(presetAccelerator({ cpu: '1', mem: '1', 'cuda.device': '1' }, null)).toBe(1);
    // None, zero or nonsense: no accelerator.
    expect(presetAccelerator({ cpu: '1', mem: '1' }, 'cuda.device')).toBe(0);
    expect(presetAccelerator({ cpu: '1', mem: '1', 'cuda.device': '0' }, 'cuda.device')).toBe(0);
    expect(presetAccelerator({ cpu: '1', mem: '1', 'cuda.shares': 'x' }, 'cuda.shares')).toBe(0);
    // What it gives is what the launch sends.
    const b = body({ ...DEFAULTS, accelerator: presetAccelerator(gpu, 'cuda.shares') }, 'cuda.shares');
    expect(b.config?.resources).toMatchObject({ 'cuda.shares': '0.5' });
  });
});
