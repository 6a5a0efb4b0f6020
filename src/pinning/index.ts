/** Tool pinning from a RunConfig's `tool_pinning`, with the store the chain picked. */
export { createPinningPolicy, TOOL_PINNING_POLICY, type PinningMode } from './policy.js';
export {
  approveTool,
  FilePinStore,
  MemoryPinStore,
  pinFile,
  RedisPinStore,
  type PinStore,
  type Pins,
  type ToolPin,
} from './store.js';
export { toolHash } from './hash.js';
