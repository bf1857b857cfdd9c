// Sharing folders on the Data page: the invitations waiting for you, and a folder's sharing
// dialog: invite users to a folder of yours, or (administrators) give a project folder's
// members their own permission; who has it, and the invitations still pending. What the
// server refuses is shown beside the field.
import { useCallback, useEffect, useState } from 'react';
import { Alert, Button, Form, Input, Modal, Radio, Space, Table, Tag, Typography } from 'antd';
import { api, ApiError, formatTime, Schema } from './api';
import { parseEmails } from './validate';

type Folder = Schema<'Folder'>;
type Invitation = Schema<'Invitation'>;
type ShareEntry = Schema<'ShareEntry'>;
type Permission = Schema<'Permission'>;

function err(e: unknown) {
  return e instanceof ApiError ? e.message : String(e);
}

/** Invitations to the signed-in user: accept (the folder joins the list) or decline. */
export function Invitations({ onAccepted, onError }: { onAccepted: () => void; onError: (e: unknown) => void }) {
  const [list, setList] = useState<Invitation[]>([]);
  const load = useCallback(() => api('GET', '/folders/invitations/list').then((r) => setList(r.invitations), onError), [onError]);
  useEffect(() => {
    load();
  }, [load]);
  if (list.length === 0) return null;
  const act = (p: Promise<unknown>, accepted: boolean) =>
    p.then(() => {
      load();
      if (accepted) onAccepted();
    }, onError);
  return (
    <Alert
      type="info"
      style={{ marginBottom: 12 }}
      data-testid="invitations"
      message={`${list.length} folder invitation${list.length === 1 ? '' : 's'}`}
      description={
        <Table<Invitation>
          size="small"
          rowKey="id"
          pagination={false}
          dataSource={list}
          columns={[
            { title: 'Folder', dataIndex: 'vfolder_name', render: (n: string) => <span data-testid={`invitation-${n}`}>{n}</span> },
            { title: 'From', dataIndex: 'inviter_user_email' },
            { title: 'Permission', dataIndex: 'perm', render: (p: string) => <Tag>{p}</Tag> },
            { title: 'Sent', dataIndex: 'created_at', render: formatTime },
            {
              title: '',
              render: (_, i) => (
                <Space>
                  <Button size="small" type="primary" data-testid={`invitation-accept-${i.vfolder_name}`} onClick={() => act(api('POST', '/folders/invitations/accept', { body: { inv_id: i.id } }), true)}>
                    Accept
                  </Button>
                  <Button size="small" data-testid={`invitation-decline-${i.vfolder_name}`} onClick={() => act(api('DELETE', '/folders/invitations/delete', { body: { inv_id: i.id } }), false)}>
                    Decline
                  </Button>
                </Space>
              ),
            },
          ]}
        />
      }
    />
  );
}

/** A folder's sharing: invite (a user folder) or share (a project folder), and who has it. */
export function ShareDialog({ folder, onClose }: { folder: Folder; onClose: () => void }) {
  const project = !!folder.group;
  const [text, setText] = useState('');
  const [perm, setPerm] = useState<Permission>(project ? 'ro' : 'rw');
  const [serverError, setServerError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [shares, setShares] = useState<ShareEntry[]>([]);
  const [pending, setPending] = useState<Invitation[]>([]);
  const [busy, setBusy] = useState(false);
  const load = useCallback(() => {
    api('GET', '/folders/_/shared', { query: { vfolder_id: folder.id } }).then((r) => setShares(r.shared), (e) => setServerError(err(e)));
    if (!project) api('GET', '/folders/invitations/list-sent').then((r) => setPending(r.invitations.filter((i) => i.vfolder_id === folder.id)), (e) => setServerError(err(e)));
  }, [folder.id, project]);
  useEffect(() => {
    load();
  }, [load]);
  const { emails, problem } = parseEmails(text);
  const shown = text.trim() ? problem ?? serverError : serverError;
  const submit = async () => {
    if (problem) return setServerError(problem);
    setBusy(true);
    setNote(null);
    try {
      if (project) {
        const r = await api('POST', '/folders/{id}/share', { path: { id: folder.id }, body: { permission: perm, emails } });
        setNote(`${folder.name} is ${perm} for ${r.shared_emails.join(', ')}.`);
      } else {
        const r = await api('POST', '/folders/{id}/invite', { path: { id: folder.id }, body: { perm, user_ids: emails } });
        const skipped = r.skipped.map((s) => `${s.email} (${s.reason})`);
        setNote([r.invited_ids.length ? `Invited ${r.invited_ids.length}.` : '', skipped.length ? `Skipped ${skipped.join(', ')}.` : ''].join(' ').trim());
      }
      setText('');
      load();
    } catch (e) {
      setServerError(err(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal open width={640} title={`Share ${folder.name}`} onCancel={onClose} footer={null}>
      <Typography.Paragraph type="secondary">
        {project
          ? 'Give members of the project their own permission on this project folder; the others keep the folder’s.'
          : 'Invite users by email. They see the folder once they accept; only you manage it.'}
      </Typography.Paragraph>
      <Form layout="vertical" onFinish={submit}>
        <Form.Item label="Emails" validateStatus={shown ? 'error' : ''} help={shown ?? undefined}>
          <Input
            data-testid="share-emails"
            value={text}
            placeholder="someone@example.org, other@example.org"
            onChange={(e) => {
              setText(e.target.value);
              setServerError(null);
            }}
          />
        </Form.Item>
        <Form.Item label="Permission">
          <Radio.Group value={perm} onChange={(e) => setPerm(e.target.value)} data-testid="share-perm">
            <Radio.Button value="ro"><span data-testid="share-perm-ro">Read only</span></Radio.Button>
            <Radio.Button value="rw"><span data-testid="share-perm-rw">Read and write</span></Radio.Button>
          </Radio.Group>
        </Form.Item>
        <Button type="primary" htmlType="submit" loading={busy} disabled={!!problem} data-testid="share-submit">
          {project ? 'Share' : 'Invite'}
        </Button>
        {note && <span style={{ marginLeft: 12 }} data-testid="share-note">{note}</span>}
      </Form>
      <Typography.Title level={5} style={{ marginTop: 20 }}>Shared with</Typography.Title>
      <Table<ShareEntry>
        size="small"
        rowKey={(s) => s.shared_to.uuid}
        pagination={false}
        dataSource={shares}
        data-testid="share-table"
        locale={{ emptyText: 'Nobody yet' }}
        columns={[
          { title: 'User', render: (_, s) => <span data-testid={`shared-${s.shared_to.email}`}>{s.shared_to.email}</span> },
          { title: 'Permission', dataIndex: 'perm', render: (p: string) => <Tag>{p}</Tag> },
          {
            title: '',
            render: (_, s) => (
              <Button size="small" danger data-testid={`unshare-${s.shared_to.email}`} onClick={() => api('DELETE', '/folders/{id}/unshare', { path: { id: folder.id }, body: { emails: [s.shared_to.email] } }).then(load, (e) => setServerError(err(e)))}>
                Remove
              </Button>
            ),
          },
        ]}
      />
      {!project && pending.length > 0 && (
        <>
          <Typography.Title level={5} style={{ marginTop: 20 }}>Invited, not yet accepted</Typography.Title>
          <Table<Invitation>
            size="small"
            rowKey="id"
            pagination={false}
            dataSource={pending}
            data-testid="pending-table"
            columns={[
              { title: 'User', dataIndex: 'invitee_user_email', render: (e: string) => <span data-testid={`pending-${e}`}>{e}</span> },
              { title: 'Permission', dataIndex: 'perm', render: (p: string) => <Tag>{p}</Tag> },
              {
                title: '',
                render: (_, i) => (
                  <Button size="small" data-testid={`cancel-${i.invitee_user_email}`} onClick={() => api('DELETE', '/folders/invitations/delete', { body: { inv_id: i.id } }).then(load, (e) => setServerError(err(e)))}>
                    Cancel
                  </Button>
                ),
              },
            ]}
          />
        </>
      )}
    </Modal>
  );
}
