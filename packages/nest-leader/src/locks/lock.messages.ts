/**
 * The texts of the locks: their option rules, their failures and what they log.
 */

import { boundedText, errorText } from '../format.js';

/** ConfigMaps, as RBAC names them (core API group). */
export const CONFIGMAP_RESOURCE = 'configmaps';

export const lockMessages = {
  filePathRule: 'must be a non-empty file path',
  /** The default failure `MemoryLock.failNext` injects: a plain `Error`, as a network failure. */
  injectedFailure: (operation: string) => `injected ${operation} failure`,
  noCluster: () =>
    'kubeConfig has no current cluster: load one (KubeConfig.loadFromFile/loadFromCluster), ' +
    'pass the path of a kubeconfig file, or use FileLock for a single host.',
  sidecarUrlRule:
    'must be the http(s) URL of a nest-leader-elector --http address, e.g. http://localhost:4040',
  sidecarUnreachable: (url: string, error: unknown) =>
    `The leader-elector sidecar did not answer GET ${url}: ${boundedText(errorText(error))}. ` +
    'Is it running ' +
    'in this pod with --http on that port?',
  sidecarNotReady: (url: string) =>
    `The leader-elector sidecar (${url}) has not read its Lease yet; asking again.`,
  sidecarUnexpected: (url: string, status: number) =>
    `GET ${url} answered HTTP ${status} without the sidecar's JSON ({"leader","name",` +
    '"leaseTransitions"}): is that address a nest-leader-elector sidecar?',
  unreadableLeaderAnnotation: (lock: string, reason: string) =>
    `${lock}: the annotation control-plane.alpha.kubernetes.io/leader is ${reason}. Treating ` +
    'the lock as held by an unknown candidate: it is taken over only after it stays unchanged ' +
    'for leaseDuration. Find out who writes it before relying on this lock.',
  fileLockBusy: (path: string) => `FileLock ${path}: timed out waiting for the file mutex.`,
  fileLockHeldTooLong: (path: string, limitMs: number) =>
    `FileLock ${path}: the file mutex was held for more than ${limitMs} ms (a stalled event ` +
    'loop?); another process may have broken it as stale, so nothing was written.',
  fileLockDirectorySymlink: (path: string) =>
    `FileLock directory ${path} is a symbolic link; refusing to follow it (whoever made it ` +
    'chooses where the election record lives). Remove the link, or pass the real directory ' +
    'as the FileLock directory option.',
  fileLockNotADirectory: (path: string) =>
    `FileLock directory ${path} exists but is not a directory; remove it or choose another ` +
    'directory.',
  fileLockDirectoryOtherOwner: (path: string, ownerUid: number, uid: number) =>
    `FileLock directory ${path} belongs to uid ${ownerUid}, not to this process's uid ${uid}: ` +
    'its owner could forge or delete the election record. Remove it (as its owner or root) ' +
    'so it is created again, or use a directory of your own.',
  fileLockDirectoryWritableByOthers: (path: string, mode: number) =>
    `FileLock directory ${path} is writable by its group or by everyone (mode ` +
    `${(mode & 0o7777).toString(8).padStart(4, '0')}): others could forge or delete the ` +
    `election record. Restrict it (chmod 700 ${path}) or use a directory of your own.`,
  fileLockSymlink: (path: string) =>
    `FileLock file ${path} is a symbolic link; refusing to follow it. Remove it: the lock ` +
    'creates the file itself.',
  fileLockNotARegularFile: (path: string) =>
    `FileLock file ${path} is not a regular file (a FIFO, a device or a directory?); remove ` +
    'it: the lock creates the file itself.',
  fileMutexLost: (path: string) =>
    `FileLock ${path}: the file mutex was removed or replaced while held; nothing was written.`,
} as const;
