// Start-up probe: reports each contract module's export names, so that a
// checkout's module missing an export is named in a clear error before the
// facade links against it. Namespace imports never fail to link.
import * as parser from './parser.js';
import * as model from './model.js';
import * as taiga from './taiga.js';
import * as warnings from './warnings.js';
import * as i18n from './i18n.js';
import * as live from './live.js';
import * as edit from './edit.js';

globalThis.werkbaumExports = {
  'parser.js': Object.keys(parser),
  'model.js': Object.keys(model),
  'taiga.js': Object.keys(taiga),
  'warnings.js': Object.keys(warnings),
  'i18n.js': Object.keys(i18n),
  'live.js': Object.keys(live),
  'edit.js': Object.keys(edit),
};
