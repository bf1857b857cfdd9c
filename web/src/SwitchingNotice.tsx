// The banner shown while a request waits through a switch of managers (retry.ts).
import { useSyncExternalStore } from 'react';
import { Alert } from 'antd';
import { isWaiting, onSwitching, SWITCHING_NOTICE } from './retry';

export default function SwitchingNotice() {
  const waiting = useSyncExternalStore(onSwitching, isWaiting);
  if (!waiting) return null;
  return <Alert banner type="warning" showIcon message={SWITCHING_NOTICE} data-testid="switching-notice" style={{ position: 'sticky', top: 0, zIndex: 1000 }} />;
}
