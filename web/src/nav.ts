// Going to another page from deep inside one (a dialog's link, the launcher's result): the
// App provides the function, pages and dialogs call it. Only the pages something links to.
import { createContext, useContext } from 'react';

export type LinkedPage = 'environments' | 'serving';

export const NavContext = createContext<(page: LinkedPage) => void>(() => undefined);

/** The function that shows another page. */
export const useNavigate = () => useContext(NavContext);
