// Ant Design passes `data-*` attributes on to the element, but the TS types of some of its
// props objects (a modal's `okButtonProps`, a table's `getCheckboxProps`) leave them out,
// so an object literal with `data-testid` is refused there. This takes one, checked.

/** `P` with `data-*` attributes. */
export type WithData<P> = P & { [attribute: `data-${string}`]: string };

/** `props` as the `P` an Ant Design prop wants, `data-*` attributes included. `P` comes from
 *  where the result goes, or is given (`dataProps<ButtonProps>({...})`), never from `props`:
 *  a property `P` does not have is refused. */
export function dataProps<P extends object>(props: WithData<NoInfer<P>>): P {
  return props;
}
