// The Commit dialog of the session detail panel (seeds, "Save session commit"): converts a
// RUNNING interactive session to a private image of its owner. The image name's rules are
// checked as typed and the server's refusals shown beside the field; the conversion is
// followed on its background task's event stream; the new image's reference can be copied.
// When the user has as many images as their policy lets them keep, the dialog says so and
// links to My Environments, where one can be removed.
import { useCallback, useEffect, useRef, useState } from 'react';
import { Alert, Button, Descriptions, Form, Input, Modal, Progress, Space, Typography } from 'antd';
import { api, ApiError, gql, Schema } from './api';
import { followTask, percent, TaskOutcome, TaskProgress, taskStreamUrl } from './bgtask';
import { customizedName, findImage, loadImages } from './images';
import { limitMessage, loadCustomized, isQuotaRefusal, ownedBy } from './myenv';
import { useNavigate } from './nav';
import * as v from './validate';

type Session = Schema<'SessionInfo'>;

type Phase = { kind: 'idle' } | { kind: 'running'; progress: TaskProgress } | { kind: 'ended'; outcome: TaskOutcome; message: string; reference?: string; name?: string };

/** The new image's reference and name, from the id the finished task gives. */
async function describeImage(id: string): Promise<{ reference?: string; name?: string }> {
  const i = findImage(await loadImages(), id);
  return i ? { reference: i.canonical_name, name: customizedName(i) } : {};
}

export default function CommitDialog({ session, onClose }: { session: Session; onClose: () => void }) {
  const [name, setName] = useState('');
  const [serverError, setServerError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const [limit, setLimit] = useState<number | null>(null);
  // The user's customized images, by name (to count them against the limit, and to tell a
  // replacement by name from a new one).
  const [mine, setMine] = useState<string[] | null>(null);
  const [quotaRefused, setQuotaRefused] = useState(false);
  const navigate = useNavigate();
  const stop = useRef<(() => void) | null>(null);

  const follow = useCallback((taskId: string) => {
    stop.current?.();
    setPhase({ kind: 'running', progress: { current: 0, total: 0, message: 'Starting…' } });
    stop.current = followTask(new EventSource(taskStreamUrl(taskId)), {
      onProgress: (progress) => setPhase({ kind: 'running', progress }),
      onEnd: (outcome, message) => {
        stop.current = null;
        setPhase({ kind: 'ended', outcome, message });
        if (outcome === 'done') {
          describeImage(message).then(
            (d) => {
              setPhase({ kind: 'ended', outcome, message, ...d });
              // It counts against the limit now (a replacement by name counted already).
              const made = d.name;
              if (made) setMine((m) => (m && !m.includes(made) ? [...m, made] : m));
            },
            () => undefined,
          );
        }
      },
    });
  }, []);

  // A conversion that already runs (started earlier, the dialog closed since) is followed.
  useEffect(() => {
    api('GET', '/session/{reference}/commit', { path: { reference: session.id } }).then(
      (c) => c.status === 'ongoing' && c.bgtask_id && follow(c.bgtask_id),
      () => undefined,
    );
    gql<{ user_resource_policy: { max_customized_image_count: number } | null }>('query { user_resource_policy { max_customized_image_count } }').then(
      (d) => setLimit(d.user_resource_policy?.max_customized_image_count ?? null),
      () => undefined,
    );
    Promise.all([loadCustomized(), api('GET', '/server/me')]).then(
      ([images, me]) => setMine(ownedBy(images, me.email).map(customizedName)),
      () => undefined,
    );
    return () => stop.current?.();
  }, [session.id, follow]);

  const refusal = v.commitRefusal(session);
  const atLimit = mine === null ? null : limitMessage(mine.length, limit);
  // At the limit, converting with the name of one of the user's images still replaces it.
  const replaces = mine?.includes(name) ?? false;
  const problem = v.imageName(name);
  const shown = (name !== '' ? problem : null) ?? serverError;
  const running = phase.kind === 'running';
  const push = async () => {
    if (problem || refusal || running) return;
    setBusy(true);
    setServerError(null);
    setQuotaRefused(false);
    try {
      const r = await api('POST', '/session/{reference}/imagify', { path: { reference: session.id }, body: { image_name: name, image_visibility: null } });
      follow(r.task_id);
    } catch (e) {
      setServerError(e instanceof ApiError ? e.message : String(e));
      setQuotaRefused(isQuotaRefusal(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      open
      width={640}
      title="Convert session to image"
      onCancel={onClose}
      footer={
        <Space>
          <Button onClick={onClose} data-testid="commit-close">Close</Button>
          <Button type="primary" loading={busy || running} disabled={!!refusal || !!problem} onClick={push} data-testid="commit-push">
            Push session to customized image
          </Button>
        </Space>
      }
    >
      <Descriptions column={1} size="small" bordered style={{ marginBottom: 12 }}>
        <Descriptions.Item label="Session">{session.name}</Descriptions.Item>
        <Descriptions.Item label="Environment">{session.image}</Descriptions.Item>
        <Descriptions.Item label="Status">{session.status} ({session.type})</Descriptions.Item>
      </Descriptions>
      {refusal && <Alert type="info" showIcon style={{ marginBottom: 12 }} message={refusal} data-testid="commit-refusal" />}
      {!refusal && (atLimit || quotaRefused) && (
        <Alert
          type={replaces ? 'info' : 'warning'}
          showIcon
          style={{ marginBottom: 12 }}
          data-testid="commit-limit"
          message={atLimit ?? 'You have reached your limit of customized images; remove one in My Environments'}
          description={
            replaces
              ? `Converting with the name ${name} replaces your image of that name.`
              : 'Or convert with the name of one of your images to replace it.'
          }
          action={
            <Button size="small" onClick={() => navigate('environments')} data-testid="commit-open-environments">
              Open My Environments
            </Button>
          }
        />
      )}
      <Alert
        type="warning"
        showIcon
        style={{ marginBottom: 12 }}
        data-testid="commit-warning"
        message="Mounted folders are not part of the image"
        description="Only the container's own files are saved. /home/work is a mounted (scratch) folder, so it is not included, nor are the data folders mounted into the session: keep what you need in a data folder and mount it again."
      />
      <Form layout="vertical">
        <Form.Item
          label="Image name"
          validateStatus={shown ? 'error' : undefined}
          help={shown ? <span data-testid="commit-name-error">{shown}</span> : '4 to 32 letters, digits, hyphens (-) or underscores (_).'}
          extra={limit ? `You may keep up to ${limit} images made from sessions; converting again with the name of one of yours replaces it.` : undefined}
        >
          <Input
            data-testid="commit-name"
            value={name}
            disabled={!!refusal || running}
            placeholder="my-image"
            onChange={(e) => {
              setName(e.target.value);
              setServerError(null);
              setQuotaRefused(false);
            }}
            onPressEnter={push}
          />
        </Form.Item>
      </Form>
      <CommitProgress phase={phase} />
    </Modal>
  );
}

function CommitProgress({ phase }: { phase: Phase }) {
  if (phase.kind === 'idle') return null;
  if (phase.kind === 'running') {
    const pct = percent(phase.progress);
    return (
      <div data-testid="commit-progress">
        <Progress percent={pct ?? 0} status="active" />
        <Typography.Text type="secondary" data-testid="commit-status">{phase.progress.message || 'Converting…'}</Typography.Text>
      </div>
    );
  }
  if (phase.outcome === 'done') {
    return (
      <Alert
        type="success"
        showIcon
        data-testid="commit-done"
        message={`The session was converted to the image ${phase.name ?? ''}`.trim()}
        description={
          phase.reference ? (
            <span>
              Choose it under Customized in the launcher's environments, or launch it as{' '}
              <Typography.Text code copyable={{ text: phase.reference }} data-testid="commit-reference">{phase.reference}</Typography.Text>
            </span>
          ) : (
            <span>Image id {phase.message}: it is listed under Customized in the launcher's environments.</span>
          )
        }
      />
    );
  }
  const title = phase.outcome === 'cancelled' ? 'The conversion was cancelled' : phase.outcome === 'lost' ? 'The conversion cannot be followed' : 'The conversion failed';
  return <Alert type="error" showIcon data-testid="commit-failed" message={title} description={phase.message} />;
}
