// The launcher's Help (?) buttons (seeds, "Resource allocation", "preopen ports"): a short
// explanation of a field, opened by a click beside its label.
import { Button, Popover } from 'antd';
import { QuestionCircleOutlined } from '@ant-design/icons';

export const HELP = {
  environment: {
    title: 'Environments',
    text: 'The base environment of the session (Python, Python ML, …) and its version; its packages come installed. Images you made from your sessions are under Customized. The image name is what is launched: copy it to launch the same image from the command line.',
  },
  cpu: {
    title: 'CPU',
    text: 'CPU cores for each container. More cores help workloads written to use several of them. The chosen image may need a minimum.',
  },
  memGiB: {
    title: 'Memory',
    text: 'Memory (RAM) for each container: it holds the data and instructions the CPU works on. With an AI accelerator, allocate at least twice its memory. The chosen image may need a minimum.',
  },
  shmemGiB: {
    title: 'Shared memory',
    text: 'Shared memory (/dev/shm) in GiB. It is taken from the memory above, so it cannot be more than that.',
  },
  accelerator: {
    title: 'AI accelerator',
    text: 'GPUs or NPUs for matrix and vector computations, such as training and inference. A fractional amount (fGPU) shares a device.',
  },
  sessions: {
    title: 'Sessions',
    text: 'How many sessions to create with these settings. Those that do not fit now wait in the queue.',
  },
  preopen: {
    title: 'Preopen ports',
    text: 'Container ports (1024–65535) to expose from the start, separated by commas or spaces. They appear in the app launcher; bind a server to the port inside the session before opening it.',
  },
} as const;

export type HelpTopic = keyof typeof HELP;

/** A (?) button that opens the help of `topic`. */
export default function HelpButton({ topic }: { topic: HelpTopic }) {
  const { title, text } = HELP[topic];
  return (
    <Popover trigger="click" title={title} content={<div style={{ maxWidth: 360 }} data-testid={`help-text-${topic}`}>{text}</div>}>
      <Button
        type="text"
        size="small"
        icon={<QuestionCircleOutlined />}
        aria-label={`Help: ${title}`}
        data-testid={`help-${topic}`}
        // Inside a field's label: the click is the button's, not the label's.
        onClick={(e) => e.preventDefault()}
      />
    </Popover>
  );
}

/** A field label with its (?) button. */
export function HelpLabel({ text, topic }: { text: string; topic: HelpTopic }) {
  return (
    <span>
      {text} <HelpButton topic={topic} />
    </span>
  );
}
