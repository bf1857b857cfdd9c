import { describe, expect, it } from 'vitest';
import { CHECKER_HELP, CHECKER_LABEL, formatDuration, parseIdleChecks, remainingNow, reportLevel, utilizationLevel } from './idle';

describe('idle checks', () => {
  it('parse the JSON text in checker order and ignore garbage', () => {
    const text = JSON.stringify({
      utilization: { remaining: 30, remaining_time_type: 'grace_period', threshold: 600, idle: false },
      network_timeout: { remaining: 65, remaining_time_type: 'expire_after', threshold: 1800, idle: false },
    });
    const r = parseIdleChecks(text);
    expect(r.map((x) => x.checker)).toEqual(['network_timeout', 'utilization']);
    expect(r[1].remaining_time_type).toBe('grace_period');
    expect(parseIdleChecks('{}')).toEqual([]);
    expect(parseIdleChecks('not json')).toEqual([]);
    expect(parseIdleChecks(null)).toEqual([]);
    expect(parseIdleChecks('[1]')).toEqual([]);
  });

  it('count down from when they were fetched', () => {
    const r = parseIdleChecks({ network_timeout: { remaining: 10, remaining_time_type: 'expire_after', threshold: 10, idle: false } })[0];
    expect(remainingNow(r, 1000, 4000)).toBe(7);
    expect(remainingNow(r, 1000, 60000)).toBe(0);
  });

  it('format durations', () => {
    expect(formatDuration(5.4)).toBe('5s');
    expect(formatDuration(65)).toBe('1m 05s');
    expect(formatDuration(3725)).toBe('1h 02m');
    expect(formatDuration(-3)).toBe('0s');
  });

  it('turn yellow then red as utilization nears its threshold', () => {
    expect(utilizationLevel(80, 10)).toBe('normal');
    expect(utilizationLevel(14, 10)).toBe('warning');
    expect(utilizationLevel(10, 10)).toBe('danger');
    expect(utilizationLevel(2, 10)).toBe('danger');
    expect(utilizationLevel(null, 10)).toBe('normal');
    expect(utilizationLevel(0, 0)).toBe('normal');
    const report = parseIdleChecks({
      utilization: {
        remaining: 600, remaining_time_type: 'expire_after', threshold: 600, idle: false,
        extra: { resources: { cpu_util: [12, 10], mem: [90, 10] }, thresholds_check_operator: 'and' },
      },
    })[0];
    expect(reportLevel(report)).toBe('warning');
  });
});

describe('the idle checks help', () => {
  it('explains every checker the panel names', () => {
    expect(CHECKER_HELP.map((h) => h.checker).sort()).toEqual(Object.keys(CHECKER_LABEL).sort());
    for (const h of CHECKER_HELP) expect(h.text.length).toBeGreaterThan(40);
  });
});
