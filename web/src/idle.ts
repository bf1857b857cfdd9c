// The idle checks of a session (its `idle_checks` field, a JSON text keyed by checker) as the
// detail panel shows them: remaining time per checker, and the utilization checker's averages
// against their thresholds, coloured as they near the threshold (seeds, "Idleness checks").
import type { components } from './api-types';

/** One checker's report (the contract's `IdleReport`); a checker this UI does not know yet
 *  is shown by its name. */
export type IdleReport = Omit<components['schemas']['IdleReport'], 'checker'> & { checker: string };

export const CHECKER_LABEL: Record<string, string> = {
  session_lifetime: 'Max session lifetime',
  network_timeout: 'Network idle timeout',
  utilization: 'Utilization checker',
};

/** What each checker does, for the (i) button of the Idle checks section (seed 000's words in ours). */
export const CHECKER_HELP: { checker: string; text: string }[] = [
  {
    checker: 'session_lifetime',
    text: 'The session is terminated this long after it was created, whatever it does, so that no session runs forever.',
  },
  {
    checker: 'network_timeout',
    text: 'The session is terminated when nothing has passed between you and it (an app such as the terminal or Jupyter, a tunnel, an execution, a download) for this long — even if a process inside is still working.',
  },
  {
    checker: 'utilization',
    text: 'After the grace period (a time during which this checker never terminates the session), the session may be terminated at any moment once its average utilization over the idle timeout stays below the threshold of every resource given; a resource without a threshold is not checked. A short burst does not extend the grace period. Hover the checker to see the current averages against their thresholds.',
  },
];

export const METRIC_LABEL: Record<string, string> = { cpu_util: 'CPU', mem: 'Memory', cuda_util: 'GPU', cuda_mem: 'GPU memory' };

/** Parses `idle_checks` (a JSON text or an object); anything else gives no reports. */
export function parseIdleChecks(v: unknown): IdleReport[] {
  let o: unknown = v;
  if (typeof v === 'string') {
    try {
      o = JSON.parse(v);
    } catch {
      return [];
    }
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) return [];
  const order = Object.keys(CHECKER_LABEL);
  return Object.entries(o as Record<string, IdleReport>)
    .map(([checker, r]) => ({ ...r, checker }))
    .sort((a, b) => order.indexOf(a.checker) - order.indexOf(b.checker));
}

/** `1h 02m`, `3m 04s`, `5s`. */
export function formatDuration(secs: number): string {
  const s = Math.max(0, Math.round(secs));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  if (h) return `${h}h ${pad(m)}m`;
  if (m) return `${m}m ${pad(s % 60)}s`;
  return `${s}s`;
}

/** Seconds left now, given the report's `remaining` as of `fetchedAt` (ms). */
export function remainingNow(r: IdleReport, fetchedAt: number, now: number): number {
  return Math.max(0, r.remaining - (now - fetchedAt) / 1000);
}

export type Level = 'normal' | 'warning' | 'danger';

/** How close a utilization average is to its threshold (low use is what gets a session
 *  reclaimed): at or below it is danger, within half again above it a warning. A metric
 *  without samples yet, or with a threshold of 0, is normal. */
export function utilizationLevel(avg: number | null, threshold: number): Level {
  if (avg === null || !(threshold > 0)) return 'normal';
  if (avg <= threshold) return 'danger';
  if (avg <= threshold * 1.5) return 'warning';
  return 'normal';
}

/** The worst level of a utilization report's metrics. */
export function reportLevel(r: IdleReport): Level {
  const levels = Object.values(r.extra?.resources ?? {}).map(([a, t]) => utilizationLevel(a, t));
  return levels.includes('danger') ? 'danger' : levels.includes('warning') ? 'warning' : 'normal';
}

export const LEVEL_COLOR: Record<Level, string | undefined> = {
  normal: undefined,
  warning: '#d4b106',
  danger: '#cf1322',
};
