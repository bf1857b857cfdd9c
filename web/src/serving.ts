// Model serving's types and helpers: services, model definition checks, auto-scaling rules
// and their decisions (docs/openapi.json).
import { api, ApiError, Schema } from './api';
import type { RuleDraft } from './validate';

export type ServiceItem = Schema<'ServiceListItem'>;
export type Service = Schema<'ServiceInfo'>;
export type Route = Schema<'ActiveRoute'>;

export const SERVICE_COLOR: Record<string, string> = {
  READY: 'default', PROVISIONING: 'blue', HEALTHY: 'green', DEGRADED: 'gold', UNHEALTHY: 'red', DESTROYING: 'orange', DESTROYED: 'default',
};
export const ROUTE_COLOR: Record<string, string> = {
  provisioning: 'blue', healthy: 'green', unhealthy: 'red', terminating: 'orange', failed_to_start: 'red',
};

/** How many of a service's routes are in its endpoint's rotation. */
export const healthyRoutes = (s: Service | null) => s?.active_routes.filter((r) => r.status === 'healthy').length ?? 0;

export type DefinitionCheck = Schema<'DefinitionChecked'>;

/** Whether a model folder's definition would serve; rejects with the server's problem. */
export function checkDefinition(model: string, modelDefinitionPath?: string): Promise<DefinitionCheck> {
  return api('POST', '/services/_/check-definition', { body: { model, model_definition_path: modelDefinitionPath ?? null } });
}

/** A check's result in words: `model-definition.yaml: topic-nb on port 8000, health /health`. */
export function describeDefinition(c: DefinitionCheck): string {
  const m = c.model;
  return `${c.path} is valid: model ${m.name}, port ${m.port}, ${m.health_check ? `health check ${m.health_check.path}` : 'no health check'}.`;
}

/** Whether an error of a definition check is about the folder (and worth showing), not a
 *  server that has no such operation. */
export function definitionProblem(e: unknown): string | null {
  if (!(e instanceof ApiError)) return String(e);
  if (e.status === 400 || /^config\.|model folder|model_definition/.test(e.message)) return e.message;
  return null;
}

export type Comparator = Schema<'Comparator'>;
export const COMPARATOR_SYMBOL: Record<Comparator, string> = {
  LESS_THAN: '<', LESS_THAN_OR_EQUAL: '≤', GREATER_THAN: '>', GREATER_THAN_OR_EQUAL: '≥',
};

/** An auto-scaling rule as the server shows it. */
export type Rule = Schema<'Rule'>;
/** One decision of a service's autoscaler. */
export type Decision = Schema<'Decision'>;
type RuleFields = Schema<'RuleFields'>;

/** The body of `POST /services/{id}/rules` for a checked draft: the mode's own fields, and
 *  the common ones given. */
export function ruleBody(d: RuleDraft): RuleFields {
  const num = (t: string) => (t.trim() === '' ? undefined : Number(t));
  const common = {
    mode: d.mode,
    metric_source: d.metric_source,
    metric_name: d.metric_name,
    min_replicas: num(d.min_replicas),
    max_replicas: num(d.max_replicas),
    cooldown_seconds: num(d.cooldown_seconds),
    priority: num(d.priority),
  };
  const own =
    d.mode === 'threshold'
      ? { threshold: d.threshold.trim(), comparator: d.comparator, step_size: num(d.step_size) }
      : { target: num(d.target), scale_up_delay_seconds: num(d.scale_up_delay_seconds), scale_down_delay_seconds: num(d.scale_down_delay_seconds) };
  return Object.fromEntries(Object.entries({ ...common, ...own }).filter(([, v]) => v !== undefined)) as RuleFields;
}

/** A rule's condition in words: `inflight > 5: +1 replica` or `inflight ≈ 4 per replica, 1–4`. */
export function describeRule(r: Rule): string {
  const range = r.min_replicas != null || r.max_replicas != null ? ` (${r.min_replicas ?? 0}–${r.max_replicas ?? 16} replicas)` : '';
  if (r.mode === 'target') return `${r.metric_name} at ${r.target} per replica${range}`;
  const step = r.step_size ?? 0;
  const cmp = r.comparator ? COMPARATOR_SYMBOL[r.comparator] : '?';
  return `${r.metric_name} ${cmp} ${r.threshold}: ${step > 0 ? '+' : ''}${step} replica${Math.abs(step) === 1 ? '' : 's'}${range}`;
}

const on = (id: string) => ({ path: { id } });
const ofRule = (id: string, rule: string) => ({ path: { id, rule } });

export const rules = {
  list: (id: string) => api('GET', '/services/{id}/rules', on(id)).then((r) => r.rules),
  add: (id: string, body: RuleFields) => api('POST', '/services/{id}/rules', { ...on(id), body }),
  change: (id: string, rule: string, body: RuleFields) => api('PATCH', '/services/{id}/rules/{rule}', { ...ofRule(id, rule), body }),
  remove: (id: string, rule: string) => api('DELETE', '/services/{id}/rules/{rule}', ofRule(id, rule)),
  decisions: (id: string) => api('GET', '/services/{id}/decisions', on(id)).then((r) => r.decisions),
};
