import { describe, expect, it } from 'vitest';
import { usageBar } from './fairshare';

describe('usageBar', () => {
  it('is full at the share and marks what is over it', () => {
    expect(usageBar(0.25, 0.5)).toMatchObject({ percent: 50, over: false, label: '25.0 % of 50.0 %' });
    expect(usageBar(0.5, 0.5)).toMatchObject({ percent: 100, over: false });
    expect(usageBar(0.75, 0.25)).toMatchObject({ percent: 100, over: true });
    expect(usageBar(0.1, 0)).toMatchObject({ percent: 0, over: false });
  });
});
