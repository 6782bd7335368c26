import { lookUp, ScenarioError, type Bindings } from './bindings.js';
import { isJsonObject, type Json } from './json.js';

/**
 * Fills a value the scenario sends: `{"$ref": name}` becomes the variable's value and
 * `{"$repeat": text, "count": n}` the text repeated n times (for frames too large to write out).
 */
export function fillTemplate(template: Json, bindings: Bindings): Json {
  if (Array.isArray(template)) return template.map((item) => fillTemplate(item, bindings));
  if (!isJsonObject(template)) return template;
  if (typeof template.$ref === 'string') return lookUp(bindings, template.$ref);
  if (typeof template.$repeat === 'string') {
    if (typeof template.count !== 'number') throw new ScenarioError('$repeat needs a numeric "count"');
    return template.$repeat.repeat(template.count);
  }
  const unknown = Object.keys(template).find((key) => key.startsWith('$'));
  if (unknown) throw new ScenarioError(`unknown operator ${unknown} in a value to send`);
  return Object.fromEntries(Object.entries(template).map(([key, value]) => [key, fillTemplate(value, bindings)]));
}
