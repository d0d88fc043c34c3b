import { setNumberPacker } from '../../src/frame/encode.js';
import { encodeCases } from './encode-cases.js';

// numbers written in JS, as everywhere but in the agent with its native addon
setNumberPacker(undefined);
encodeCases((title) => title);
