// The model folder field of a model service (the Serving page's Create service dialog, the
// launcher's Inference type): the user's folders of usage mode `model`, the chosen one's
// definition checked at once as the server will check it at create.
import { useEffect, useState } from 'react';
import { Form, Select } from 'antd';
import { api, Schema } from './api';
import { checkDefinition, definitionProblem, describeDefinition } from './serving';

export default function ModelFolderField({
  value,
  onChange,
  problem,
  testPrefix = 'svc',
}: {
  value: string;
  onChange: (model: string) => void;
  /** What the form (or the server) finds wrong with the choice; shown before the check's. */
  problem: string | null;
  /** Test ids: `<prefix>-model`, `<prefix>-model-error`, `<prefix>-definition-ok`. */
  testPrefix?: string;
}) {
  const [folders, setFolders] = useState<Schema<'Folder'>[] | null>(null);
  const [definition, setDefinition] = useState<{ model: string; ok?: string; problem?: string } | null>(null);
  useEffect(() => {
    api('GET', '/folders').then((f) => setFolders(f.filter((x) => x.usage_mode === 'model')), () => setFolders([]));
  }, []);
  useEffect(() => {
    if (!value) return setDefinition(null);
    let live = true;
    setDefinition({ model: value });
    checkDefinition(value).then(
      (c) => live && setDefinition({ model: value, ok: describeDefinition(c) }),
      (e) => {
        const p = definitionProblem(e);
        if (live) setDefinition(p ? { model: value, problem: p } : null);
      },
    );
    return () => {
      live = false;
    };
  }, [value]);

  const shown = problem ?? definition?.problem ?? null;
  const help = shown ? (
    <span data-testid={`${testPrefix}-model-error`}>{shown}</span>
  ) : definition?.ok ? (
    <span style={{ color: '#389e0d' }} data-testid={`${testPrefix}-definition-ok`}>{definition.ok}</span>
  ) : definition ? (
    'Checking the model definition…'
  ) : undefined;
  return (
    <Form.Item label="Model folder" validateStatus={shown ? 'error' : undefined} help={help}>
      <Select
        data-testid={`${testPrefix}-model`}
        value={value || undefined}
        placeholder={folders && !folders.length ? 'No model folders: create one on the Data page (usage mode model)' : 'Choose a model folder'}
        loading={folders === null}
        onChange={onChange}
        options={(folders ?? []).map((f) => ({ value: f.name, label: f.group ? `${f.name} (project ${f.group})` : f.name }))}
      />
    </Form.Item>
  );
}
