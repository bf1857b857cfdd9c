// The usage bar of a fair-share node: its fraction of the group's usage against its
// fraction of the group's shares.

export interface UsageBar {
  /** 0–100: the bar is full at the node's share. */
  percent: number;
  /** Over its share. */
  over: boolean;
  label: string;
  title: string;
}

export function usageBar(normUsage: number, normShares: number): UsageBar {
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const ratio = normShares > 0 ? normUsage / normShares : 0;
  return {
    percent: Math.min(100, Math.round(ratio * 100)),
    over: ratio > 1,
    label: `${pct(normUsage)} of ${pct(normShares)}`,
    title: `${pct(normUsage)} of the group's usage, ${pct(normShares)} of its shares`,
  };
}
