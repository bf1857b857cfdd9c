// Fair share on the admin page: each resource group's share tree (domain → project → user)
// with shares, decayed usage against share as bars, and the fair-share factor, as
// `bai admin fairshare` prints it (GET /admin/fairshare).
import { useEffect, useState } from 'react';
import { App as AntApp, Progress, Table, Tag, Typography } from 'antd';
import { api, Schema } from './api';
import { errText } from './dialogs';
import { usageBar } from './fairshare';

type Group = Schema<'FairShareGroup'>;
type Node = Schema<'FairShareNode'>;

export default function FairShare() {
  const { message } = AntApp.useApp();
  const [groups, setGroups] = useState<Group[]>([]);
  useEffect(() => {
    api('GET', '/admin/fairshare').then((r) => setGroups(r.groups), (e) => message.error(errText(e)));
  }, [message]);
  return (
    <>
      <Typography.Title level={4} style={{ marginTop: 24 }}>Fair share</Typography.Title>
      {groups.map((g) => (
        <div key={g.resource_group} data-testid={`fairshare-${g.resource_group}`} style={{ marginBottom: 16 }}>
          <Typography.Text strong>{g.resource_group}</Typography.Text>{' '}
          <Tag>{g.scheduler}</Tag>
          <Typography.Text type="secondary">
            half-life {Math.round(g.half_life_secs / 3600)} h · weights {g.weights}
          </Typography.Text>
          <Table<Node>
            rowKey={(n) => `${n.depth}:${n.level}:${n.name}`}
            size="small"
            pagination={false}
            dataSource={g.nodes}
            locale={{ emptyText: 'No usage recorded yet' }}
            columns={[
              {
                title: 'Account',
                width: 260,
                render: (_, n) => (
                  <span style={{ paddingInlineStart: (n.depth - 1) * 16 }} title={`${n.level} ${n.name}`}>
                    {n.name} <Typography.Text type="secondary">{n.level}</Typography.Text>
                  </span>
                ),
              },
              { title: 'Shares', width: 80, render: (_, n) => n.shares },
              {
                // The bar is its usage against its share of the group: full at its share,
                // red beyond it.
                title: 'Usage against share',
                render: (_, n) => {
                  const b = usageBar(n.norm_usage, n.norm_shares);
                  return (
                    <div data-testid={`fairshare-bar-${g.resource_group}-${n.name}`} title={b.title}>
                      <Progress percent={b.percent} status={b.over ? 'exception' : 'normal'} size="small" format={() => b.label} />
                    </div>
                  );
                },
              },
              { title: 'Factor', width: 90, render: (_, n) => n.factor.toFixed(3) },
            ]}
          />
        </div>
      ))}
    </>
  );
}
