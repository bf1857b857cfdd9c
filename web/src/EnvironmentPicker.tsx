// The launcher's Environments (seeds, "Environments"): Environment and Version from the
// image catalogue, the chosen image's name read-only with a copy icon, the user's customized
// images in a group of their own (each with a copy icon for its reference), and a free image
// reference that, when given, is launched instead.
import { Alert, Col, Form, Input, Row, Select, Space, Tag, Typography } from 'antd';
import type { ReactNode } from 'react';
import { customizedName, Environment, findImage, formatGiB, groupImages, ImageNode, isCustomized, Minimum, versionLabel } from './images';
import { HelpLabel } from './HelpButton';

const ENV = 'env:';
const IMG = 'img:';

function CustomizedOption({ image }: { image: ImageNode }) {
  return (
    <Space size={4} data-testid={`env-option-customized-${customizedName(image)}`}>
      <span>{customizedName(image)}</span>
      <Tag color="purple">Customized</Tag>
      {/* Copies the reference without choosing the image. */}
      <span onClick={(e) => e.stopPropagation()}>
        <Typography.Text copyable={{ text: image.canonical_name, tooltips: ['Copy the image reference', 'Copied'] }} />
      </span>
    </Space>
  );
}

/** The minimum an image needs, in words; null when it says none. */
function minimumText(m: Minimum): string | null {
  const parts = [m.cpu ? `${m.cpu} CPU core${m.cpu === 1 ? '' : 's'}` : '', m.memGiB ? `${formatGiB(m.memGiB)} of memory` : ''].filter(Boolean);
  return parts.length ? `Needs at least ${parts.join(' and ')}.` : null;
}

export default function EnvironmentPicker({
  images,
  error,
  value,
  onChange,
  image,
  onImage,
  minimum,
}: {
  /** The catalogue; null while it loads. */
  images: ImageNode[] | null;
  error: string | null;
  /** The chosen image (a canonical name, or an alias such as `python`). */
  value: string;
  onChange: (reference: string) => void;
  /** The free image reference ('' for none). */
  image: string;
  onImage: (reference: string) => void;
  minimum: Minimum;
}) {
  const { environments, customized } = groupImages(images ?? []);
  const chosen = findImage(images ?? [], value);
  const env: Environment | undefined = chosen && !isCustomized(chosen) ? environments.find((e) => e.key === chosen.name) : undefined;
  const selectValue = chosen ? (isCustomized(chosen) ? IMG + chosen.canonical_name : ENV + chosen.name) : undefined;
  const names = new Map<string, ReactNode>([
    ...environments.map((e): [string, ReactNode] => [ENV + e.key, e.label]),
    ...customized.map((i): [string, ReactNode] => [IMG + i.canonical_name, <Space size={4} key={i.id}>{customizedName(i)}<Tag color="purple">Customized</Tag></Space>]),
  ]);
  const pick = (v: string) => {
    if (v.startsWith(IMG)) return onChange(v.slice(IMG.length));
    const e = environments.find((x) => x.key === v.slice(ENV.length));
    if (e?.images[0]) onChange(e.images[0].canonical_name);
  };
  const versions = env ? env.images : chosen ? [chosen] : [];
  const reference = chosen?.canonical_name ?? value;
  const needs = minimumText(minimum);
  return (
    <>
      {error && <Alert type="warning" showIcon style={{ marginBottom: 12 }} message={`The image catalogue cannot be loaded: ${error}`} description="You can still give an image reference below." />}
      <Row gutter={16}>
        <Col span={8}>
          <Form.Item label={<HelpLabel text="Environments" topic="environment" />}>
            <Select
              data-testid="environment"
              loading={images === null && !error}
              value={selectValue}
              placeholder={value || 'Choose an environment'}
              onChange={pick}
              labelRender={({ value: v }) => names.get(String(v)) ?? String(v)}
              options={[
                ...environments.map((e) => ({ value: ENV + e.key, label: <span data-testid={`env-option-${e.label}`}>{e.label}</span> })),
                ...(customized.length
                  ? [{ label: <span data-testid="env-group-customized">Customized</span>, title: 'Customized', options: customized.map((i) => ({ value: IMG + i.canonical_name, label: <CustomizedOption image={i} /> })) }]
                  : []),
              ]}
            />
          </Form.Item>
        </Col>
        <Col span={8}>
          <Form.Item label="Version" help={needs ?? undefined}>
            <Select
              data-testid="version"
              value={chosen?.canonical_name}
              disabled={!env}
              onChange={onChange}
              options={versions.map((i) => ({ value: i.canonical_name, label: <span data-testid={`version-option-${i.tag}`}>{versionLabel(i.tag)}</span> }))}
            />
          </Form.Item>
        </Col>
        <Col span={8}>
          <Form.Item label="Image name">
            <Typography.Text code copyable={{ text: reference, tooltips: ['Copy the image name', 'Copied'] }} data-testid="image-name" style={{ wordBreak: 'break-all' }}>
              {reference}
            </Typography.Text>
          </Form.Item>
        </Col>
      </Row>
      <Form.Item label="Other image (optional)" help={image ? 'This reference is launched instead of the environment above.' : undefined}>
        <Input data-testid="image-free" value={image} onChange={(e) => onImage(e.target.value)} placeholder="bai/python:3.11-bookworm" style={{ maxWidth: 480 }} />
      </Form.Item>
    </>
  );
}
