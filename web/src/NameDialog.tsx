// A dialog that asks for one name: the client's rule is checked as you type, and the server's
// answer (a refused name, a conflict) is shown beside the field, not as a passing toast.
import { ReactNode, useState } from 'react';
import { Input, Modal } from 'antd';
import type { ButtonProps } from 'antd';
import { ApiError } from './api';
import { dataProps } from './dataProps';
import type { Problem } from './validate';

export default function NameDialog({
  title,
  initial = '',
  placeholder,
  okText = 'OK',
  check,
  onSubmit,
  onClose,
  testId = 'name-dialog',
  children,
}: {
  title: string;
  initial?: string;
  placeholder?: string;
  okText?: string;
  check: (name: string) => Problem;
  onSubmit: (name: string) => Promise<unknown>;
  onClose: () => void;
  testId?: string;
  /** More fields, below the name. */
  children?: ReactNode;
}) {
  const [name, setName] = useState(initial);
  const [serverError, setServerError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const problem = check(name);
  const shown = problem ?? serverError;
  const submit = async () => {
    if (problem) return;
    setBusy(true);
    try {
      await onSubmit(name);
      onClose();
    } catch (e) {
      setServerError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal open title={title} okText={okText} onOk={submit} onCancel={onClose} confirmLoading={busy} okButtonProps={dataProps<ButtonProps>({ disabled: !!problem, 'data-testid': `${testId}-ok` })}>
      <Input
        autoFocus
        data-testid={`${testId}-input`}
        status={shown ? 'error' : ''}
        value={name}
        placeholder={placeholder}
        onChange={(e) => {
          setName(e.target.value);
          setServerError(null);
        }}
        onPressEnter={submit}
      />
      {shown && (
        <div style={{ color: '#cf1322', fontSize: 12, marginTop: 4 }} data-testid={`${testId}-error`}>
          {shown}
        </div>
      )}
      {children}
    </Modal>
  );
}
