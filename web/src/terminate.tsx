// Terminating a session from the UI. While the session is being converted to an image the
// server refuses (409, `…/session-busy`): the user is told why and offered "Force terminate"
// (`DELETE ?forced=true`), which stops the conversion (seeds, "Save session commit").
import { useCallback } from 'react';
import { App as AntApp } from 'antd';
import type { ButtonProps } from 'antd';
import { api, ApiError } from './api';
import { dataProps } from './dataProps';
import { errText, SessionRef } from './dialogs';

/** The server refused because a commit of the session runs. */
export function isBusy(e: unknown): boolean {
  return e instanceof ApiError && e.status === 409 && (e.type ?? '').endsWith('session-busy');
}

/** `DELETE /session/{reference}`, by force when `forced`. */
export function terminateSession(s: SessionRef, forced = false) {
  return api('DELETE', '/session/{reference}', { path: { reference: s.id }, query: { forced: forced ? 'true' : undefined } });
}

/** What the force-terminate offer says. */
export const BUSY_EXPLANATION =
  'This session is being converted to an image, and a session cannot be terminated while that runs. Force terminate stops the conversion (no image is kept) and terminates the session.';

/** A function that terminates a session and handles a refusal for a running commit. */
export function useTerminate(onDone?: () => void) {
  const { message, modal } = AntApp.useApp();
  const terminate = useCallback(
    async (s: SessionRef, forced = false): Promise<void> => {
      try {
        await terminateSession(s, forced);
        message.success(`${s.name} is terminating`);
        onDone?.();
      } catch (e) {
        if (!forced && isBusy(e)) {
          modal.confirm({
            title: `${s.name} is being converted to an image`,
            content: <span data-testid="busy-explanation">{BUSY_EXPLANATION}</span>,
            okText: 'Force terminate',
            okButtonProps: dataProps<ButtonProps>({ danger: true, 'data-testid': 'force-terminate' }),
            onOk: () => terminate(s, true),
          });
        } else {
          message.error(errText(e));
        }
      }
    },
    [message, modal, onDone],
  );
  return terminate;
}
