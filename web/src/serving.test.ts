import { describe, expect, it } from 'vitest';
import { ApiError } from './api';
import { definitionProblem, describeDefinition, describeRule, healthyRoutes, Rule, ruleBody, Service } from './serving';
import type { RuleDraft } from './validate';

const draft: RuleDraft = {
  mode: 'threshold', metric_source: 'INFERENCE_FRAMEWORK', metric_name: 'inflight', threshold: ' 5 ', comparator: 'GREATER_THAN',
  step_size: '1', target: '', min_replicas: '', max_replicas: '3', cooldown_seconds: '300', scale_up_delay_seconds: '0',
  scale_down_delay_seconds: '60', priority: '0',
};

const rule: Rule = {
  id: 'r1', mode: 'threshold', metric_source: 'INFERENCE_FRAMEWORK', metric_name: 'inflight', threshold: '5', comparator: 'GREATER_THAN',
  step_size: 1, target: null, scale_up_delay_seconds: 0, scale_down_delay_seconds: 0, cooldown_seconds: 300, min_replicas: null,
  max_replicas: 3, priority: 0, enabled: true, created_at: '2026-11-23T00:00:00Z', last_triggered_at: null,
};

describe('auto-scaling rules', () => {
  it('send the fields of their mode, numbers as numbers, blanks left out', () => {
    expect(ruleBody(draft)).toEqual({
      mode: 'threshold', metric_source: 'INFERENCE_FRAMEWORK', metric_name: 'inflight', threshold: '5', comparator: 'GREATER_THAN',
      step_size: 1, max_replicas: 3, cooldown_seconds: 300, priority: 0,
    });
    const target = ruleBody({ ...draft, mode: 'target', target: '4', min_replicas: '1' });
    expect(target).toMatchObject({ mode: 'target', target: 4, min_replicas: 1, max_replicas: 3, scale_up_delay_seconds: 0, scale_down_delay_seconds: 60 });
    expect(target).not.toHaveProperty('threshold');
    expect(target).not.toHaveProperty('comparator');
  });
  it('read as words', () => {
    expect(describeRule(rule)).toBe('inflight > 5: +1 replica (0–3 replicas)');
    expect(describeRule({ ...rule, comparator: 'LESS_THAN_OR_EQUAL', threshold: '1', step_size: -2, max_replicas: null })).toBe('inflight ≤ 1: -2 replicas');
    expect(describeRule({ ...rule, mode: 'target', target: 4, min_replicas: 1, max_replicas: 4 })).toBe('inflight at 4 per replica (1–4 replicas)');
  });
});

describe('model definitions', () => {
  it('say what serves', () => {
    const health = { path: '/health', interval: 1, max_retries: 3, max_wait_time: 5, expected_status_code: 200, initial_delay: 30 };
    const model = { name: 'topic-nb', model_path: '/models', command: 'python3 serve.py', port: 8000, health_check: health };
    const ok = { ok: true, path: 'model-definition.yaml', model };
    expect(describeDefinition(ok)).toBe('model-definition.yaml is valid: model topic-nb, port 8000, health check /health.');
    expect(describeDefinition({ ...ok, model: { ...model, health_check: null } })).toMatch('no health check');
  });
  it("show the folder's problems, not a server without the check", () => {
    expect(definitionProblem(new ApiError(400, 'Invalid', 'model-definition.yaml in model folder "m": models[0].service: missing field `port`'))).toMatch('missing field');
    expect(definitionProblem(new ApiError(404, 'Not found', 'config.model: no data folder named "x"'))).toMatch('no data folder');
    expect(definitionProblem(new ApiError(404, 'Not found', 'no such service'))).toBeNull();
  });
});

describe('services', () => {
  it('count healthy routes', () => {
    const routes = ['healthy', 'provisioning', 'healthy', 'terminating'].map((status, i) => ({ route_id: `r${i}`, status }));
    expect(healthyRoutes({ active_routes: routes } as unknown as Service)).toBe(2);
    expect(healthyRoutes(null)).toBe(0);
  });
});
