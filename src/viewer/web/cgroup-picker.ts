/**
 * The cgroup picker of a section whose metrics have a `cgroup` label: one
 * cgroup from the list, all of them, or a glob typed in; it becomes the
 * queries' `match=cgroup=<glob>`.
 */
import type { MetricEntry } from '../api.js';
import { labelValues } from './chart-plan.js';
import { el } from './dom.js';

export const CGROUP_LABEL = 'cgroup';

/** The picker, or undefined when no metric of the section has the label. */
export function cgroupPicker(metrics: readonly MetricEntry[], initial: string, onChange: (glob: string) => void): HTMLElement | undefined {
  const withLabel = metrics.filter((m) => m.labels.includes(CGROUP_LABEL));
  if (withLabel.length === 0) return undefined;
  const values = labelValues(withLabel, CGROUP_LABEL);
  const select = el('select', { class: 'cgroup-select', 'aria-label': 'cgroup' });
  select.append(el('option', { value: '' }, `all cgroups (${values.length})`));
  for (const v of values) select.append(el('option', { value: v, selected: v === initial }, v));
  const input = el('input', { type: 'text', class: 'cgroup-glob', placeholder: 'or a glob, e.g. /system.slice/*', value: initial, size: 28 });
  select.addEventListener('change', () => {
    input.value = select.value;
    onChange(select.value);
  });
  input.addEventListener('change', () => {
    select.value = values.includes(input.value) ? input.value : '';
    onChange(input.value.trim());
  });
  return el('div', { class: 'cgroup-picker' }, el('label', {}, 'cgroup ', select), ' ', input);
}
