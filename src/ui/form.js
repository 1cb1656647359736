// Forms generated from JSON Schemas: a tool's inputSchema (Try it) and an
// elicitation's requestedSchema. Strings, numbers, integers, booleans and
// enums get their own controls; arrays of enums get checkboxes; anything
// else is written as JSON.
import { h } from './dom.js';

let seq = 0;

function describe(name, prop, required) {
  const bits = [prop.type || 'any'];
  if (prop.format) bits.push(prop.format);
  if (prop.minimum !== undefined || prop.maximum !== undefined) bits.push(`${prop.minimum ?? '…'}–${prop.maximum ?? '…'}`);
  return h('span', { class: 'hint' }, [prop.description || prop.title || '', prop.description || prop.title ? ' · ' : '', bits.join(', '), required ? ' · required' : '']);
}

// One control; returns {el, read()} where read() gives the value, undefined
// to leave the key out, or throws a sentence.
function control(name, prop, required) {
  const id = `f${++seq}`;
  const label = h('label', { for: id }, prop.title && prop.title !== name ? `${name} (${prop.title})` : name, required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null);
  const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type;
  const def = prop.default;
  if (type === 'boolean') {
    const input = h('input', { id, type: 'checkbox', 'data-name': name });
    input.checked = def === true;
    return { el: h('div', { class: 'field check' }, input, label, h('span', { class: 'hint full' }, prop.description || '')), read: () => input.checked };
  }
  const choices = Array.isArray(prop.enum) ? prop.enum.map((v, i) => [v, (prop.enumNames && prop.enumNames[i]) ?? v])
    : Array.isArray(prop.oneOf) && prop.oneOf.every((o) => o && 'const' in o) ? prop.oneOf.map((o) => [o.const, o.title ?? o.const]) : null;
  if (choices && (type === 'string' || type === undefined)) {
    const select = h('select', { id, 'data-name': name, required }, required ? null : h('option', { value: '' }, '—'), choices.map(([v, t]) => h('option', { value: String(v) }, String(t))));
    if (def !== undefined) select.value = String(def);
    return { el: h('div', { class: 'field' }, label, select, describe(name, prop, required)), read: () => (select.value === '' ? undefined : select.value) };
  }
  const it = prop.items || {};
  const items = Array.isArray(it.enum) ? it.enum.map((v) => [v, v]) : Array.isArray(it.anyOf) ? it.anyOf.map((o) => [o.const, o.title ?? o.const]) : null;
  if (type === 'array' && items) {
    const boxes = items.map(([v], i) => {
      const box = h('input', { type: 'checkbox', id: `${id}-${i}`, value: String(v) });
      box.checked = Array.isArray(def) && def.includes(v);
      return box;
    });
    const group = h('fieldset', { class: 'field' }, h('legend', {}, name), boxes.map((b, i) => h('label', { for: b.id, class: 'row' }, b, String(items[i][1]))), describe(name, prop, required));
    return { el: group, read: () => boxes.filter((b) => b.checked).map((b) => b.value) };
  }
  if (type === 'string' || type === 'number' || type === 'integer') {
    const attrs = { id, 'data-name': name, required, type: type === 'string' ? (prop.format === 'email' ? 'email' : prop.format === 'date' ? 'date' : prop.format === 'uri' ? 'url' : 'text') : 'number' };
    if (type === 'number') attrs.step = 'any';
    if (prop.minimum !== undefined) attrs.min = prop.minimum;
    if (prop.maximum !== undefined) attrs.max = prop.maximum;
    const input = h('input', attrs);
    if (def !== undefined) input.value = String(def);
    return {
      el: h('div', { class: 'field' }, label, input, describe(name, prop, required)),
      read: () => {
        if (input.value === '') return undefined;
        if (type === 'string') return input.value;
        const n = Number(input.value);
        if (Number.isNaN(n) || (type === 'integer' && !Number.isInteger(n))) throw new Error(`${name} must be ${type === 'integer' ? 'an integer' : 'a number'}`);
        return n;
      },
    };
  }
  const area = h('textarea', { id, 'data-name': name, class: 'mono', placeholder: type === 'array' ? '[ ]' : type === 'object' ? '{ }' : 'JSON' });
  if (def !== undefined) area.value = JSON.stringify(def, null, 2);
  return {
    el: h('div', { class: 'field' }, label, area, describe(name, prop, required)),
    read: () => {
      if (area.value.trim() === '') return undefined;
      try { return JSON.parse(area.value); } catch { throw new Error(`${name} is not valid JSON`); }
    },
  };
}

// The controls of an object schema; read() gives the object or throws.
export function schemaFields(schema) {
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const controls = Object.entries(props).map(([name, prop]) => ({ name, required: required.has(name), ...control(name, prop || {}, required.has(name)) }));
  return {
    els: controls.length ? controls.map((c) => c.el) : [h('p', { class: 'muted' }, 'This tool takes no arguments.')],
    read() {
      const out = {};
      for (const c of controls) {
        const v = c.read();
        if (v === undefined) {
          if (c.required) throw new Error(`${c.name} is required`);
          continue;
        }
        out[c.name] = v;
      }
      return out;
    },
  };
}
