import { useCallback, useEffect, useState } from 'react';
import { Alert, Badge, Button, Card, Divider, Dropdown, Form, Input, Layout, List, Menu, Space, Typography } from 'antd';
import { AppstoreOutlined, AuditOutlined, CloudServerOutlined, ClusterOutlined, DesktopOutlined, FolderOutlined, SettingOutlined } from '@ant-design/icons';
import { api, ApiError, Me, Schema } from './api';
import Sessions from './Sessions';
import Launcher from './Launcher';
import type { LaunchSettings } from './launch';
import Data from './Data';
import Agents from './Agents';
import Audit from './Audit';
import Serving from './Serving';
import MyEnvironments from './MyEnvironments';
import Settings from './Settings';
import { LinkedPage, NavContext } from './nav';
import SwitchingNotice from './SwitchingNotice';

export interface Note {
  id: number;
  text: string;
  sessionId?: string;
  at: string;
}

type Page = 'sessions' | 'launcher' | 'serving' | 'data' | 'environments' | 'settings' | 'agents' | 'audit';

type LoginOptions = Schema<'LoginOptions'>;

/** The site's OpenID provider, when the server has one (`baid up --oidc-issuer`). */
function useLoginOptions(): LoginOptions | null {
  const [options, setOptions] = useState<LoginOptions | null>(null);
  useEffect(() => {
    api('GET', '/server/login-options').then(setOptions, () => setOptions(null));
  }, []);
  return options;
}

function Login({ onLogin, loggedOut }: { onLogin: (m: Me) => void; loggedOut: boolean }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const options = useLoginOptions();
  const oidc = options?.oidc ?? null;
  // With a directory (LDAP) the field takes its user name as well as an email.
  const nameLabel = options?.directory ? 'User name or email' : 'Email';
  const submit = async (v: { email: string; password: string }) => {
    setBusy(true);
    setError(null);
    try {
      const r = await api('POST', '/server/login', { body: { username: v.email, password: v.password } });
      onLogin(r.data);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <SwitchingNotice />
      <div style={{ display: 'flex', justifyContent: 'center', marginTop: 120 }}>
        <Card title="Log in to bai" style={{ width: 380 }}>
          <Form layout="vertical" onFinish={submit}>
            <Form.Item label={nameLabel} name="email" rules={[{ required: true, message: `Enter your ${nameLabel.toLowerCase()}.` }]}>
              <Input autoComplete="username" data-testid="login-email" />
            </Form.Item>
            <Form.Item label="Password" name="password" rules={[{ required: true, message: 'Enter your password.' }]}>
              <Input.Password autoComplete="current-password" data-testid="login-password" />
            </Form.Item>
            {error && <Alert type="error" showIcon message={error} style={{ marginBottom: 16 }} data-testid="login-error" />}
            <Button type="primary" htmlType="submit" block loading={busy} data-testid="login-submit">
              Log in
            </Button>
          </Form>
          {oidc && (
            <>
              <Divider plain>or</Divider>
              {/* A full-page navigation: the server sends the browser to the provider and back. */}
              <Button block href={oidc.login_url} data-testid="login-oidc">
                Log in with {oidc.name}
              </Button>
              {loggedOut && oidc.logout_url && (
                <Typography.Paragraph type="secondary" style={{ marginTop: 12, marginBottom: 0 }}>
                  You are logged out of bai.{' '}
                  <a href={oidc.logout_url} data-testid="logout-oidc">
                    Also log out of {oidc.name}
                  </a>
                </Typography.Paragraph>
              )}
            </>
          )}
        </Card>
      </div>
    </>
  );
}

export default function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  // `#keypair` (where `bai login` sends users without keys) opens Settings → My keypair.
  const [page, setPage] = useState<Page>(() => (window.location.hash === '#keypair' ? 'settings' : 'sessions'));
  // The left sidebar: collapsed by the user, or by a narrow window (below the `md` width).
  const [collapsed, setCollapsed] = useState(false);
  const [notes, setNotes] = useState<Note[]>([]);
  const [relaunch, setRelaunch] = useState<LaunchSettings | null>(null);
  const [loggedOut, setLoggedOut] = useState(false);

  useEffect(() => {
    api('GET', '/server/me').then(setMe, () => setMe(null));
  }, []);

  // A link from inside a page (a dialog's, the launcher's result) to another one.
  const navigate = useCallback((p: LinkedPage) => {
    setRelaunch(null);
    setPage(p);
  }, []);

  const notify = useCallback((text: string, sessionId?: string) => {
    setNotes((n) => [{ id: Date.now() + Math.random(), text, sessionId, at: new Date().toLocaleTimeString() }, ...n].slice(0, 50));
  }, []);

  // While the first request waits (through a switch of managers, say), only the notice shows.
  if (me === undefined) return <SwitchingNotice />;
  if (me === null) return <Login onLogin={setMe} loggedOut={loggedOut} />;

  // Nothing of one user's stays for the next one who logs in in this tab.
  const logout = async () => {
    await api('POST', '/server/logout').catch(() => undefined);
    setNotes([]);
    setRelaunch(null);
    setPage('sessions');
    setLoggedOut(true);
    setMe(null);
  };

  // Pages and their dialogs may send the user to another page (nav.ts).
  const layout = (
    <Layout style={{ minHeight: '100vh' }}>
      <Layout.Sider
        collapsible
        collapsed={collapsed}
        onCollapse={setCollapsed}
        breakpoint="md"
        theme="light"
        width={200}
        style={{ borderRight: '1px solid #eee' }}
        data-testid="sidebar"
      >
        <Typography.Title level={4} style={{ margin: '16px 0 8px', textAlign: 'center' }}>
          bai
        </Typography.Title>
        {/* The product's navigation: the current page marked; admins also see theirs. */}
        <Menu
          mode="inline"
          selectedKeys={[page === 'launcher' ? 'sessions' : page]}
          onClick={(e) => setPage(e.key as Page)}
          style={{ borderInlineEnd: 'none' }}
          items={[
            { key: 'sessions', label: 'Sessions', icon: <DesktopOutlined /> },
            { key: 'data', label: 'Data', icon: <FolderOutlined /> },
            { key: 'serving', label: 'Serving', icon: <CloudServerOutlined /> },
            // The images the user made from their sessions.
            { key: 'environments', label: 'My Environments', icon: <AppstoreOutlined /> },
            // The user's dotfiles.
            { key: 'settings', label: 'Settings', icon: <SettingOutlined /> },
            // Administrators see every agent and its devices, and the audit log.
            ...(me.is_admin
              ? [
                  { key: 'agents', label: 'Agents', icon: <ClusterOutlined /> },
                  { key: 'audit', label: 'Audit log', icon: <AuditOutlined /> },
                ]
              : []),
          ]}
        />
      </Layout.Sider>
      <Layout>
        <SwitchingNotice />
        <Layout.Header style={{ display: 'flex', alignItems: 'center', justifyContent: 'flex-end', gap: 24, background: '#fff', borderBottom: '1px solid #eee' }}>
          <Space>
            <Dropdown
              trigger={['click']}
              dropdownRender={() => (
                <Card size="small" style={{ width: 360, maxHeight: 400, overflow: 'auto' }} title="Notifications">
                  <List
                    size="small"
                    dataSource={notes}
                    locale={{ emptyText: 'No notifications' }}
                    renderItem={(n) => (
                      <List.Item>
                        <Typography.Text type="secondary">{n.at}</Typography.Text>&nbsp;{n.text}
                      </List.Item>
                    )}
                  />
                </Card>
              )}
            >
              <Badge count={notes.length} size="small">
                <Button data-testid="notifications">Notifications</Button>
              </Badge>
            </Dropdown>
            <Typography.Text data-testid="whoami">
              {me.email} {me.is_admin ? '(superadmin)' : ''}
            </Typography.Text>
            <Button onClick={logout} data-testid="logout">
              Log out
            </Button>
          </Space>
        </Layout.Header>
        <Layout.Content style={{ padding: 24 }}>
          {page === 'sessions' && (
            <Sessions
              me={me}
              notify={notify}
              onStart={(s) => {
                setRelaunch(s);
                setPage('launcher');
              }}
            />
          )}
          {page === 'launcher' && (
            <Launcher
              me={me}
              initial={relaunch}
              notify={notify}
              onDone={() => {
                setRelaunch(null);
                setPage('sessions');
              }}
            />
          )}
          {page === 'serving' && <Serving />}
          {page === 'data' && <Data isAdmin={me.is_admin} />}
          {page === 'environments' && <MyEnvironments me={me} />}
          {page === 'settings' && <Settings />}
          {page === 'agents' && me.is_admin && <Agents />}
          {page === 'audit' && me.is_admin && <Audit />}
        </Layout.Content>
      </Layout>
    </Layout>
  );
  return <NavContext.Provider value={navigate}>{layout}</NavContext.Provider>;
}
