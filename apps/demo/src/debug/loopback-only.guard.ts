import {
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  Injectable,
} from '@nestjs/common';

/**
 * Whether `address` (a socket's remote address) is this host's loopback: 127.0.0.0/8, `::1`,
 * or an IPv4 loopback mapped into IPv6 (`::ffff:127.0.0.1`).
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}

/**
 * Lets a request through only when it came over loopback, judged by the TCP connection's own
 * remote address — never by `X-Forwarded-For` or `req.ip`, which a client writes. The demo's
 * debug routes can stall the process: in a pod, only `kubectl exec` into it reaches them, not
 * other pods, the Service or the node.
 * @throws ForbiddenException (403) for any other client.
 */
@Injectable()
export class LoopbackOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ socket?: { remoteAddress?: string } }>();
    if (isLoopbackAddress(request.socket?.remoteAddress)) return true;
    throw new ForbiddenException('debug routes answer only on loopback (127.0.0.1, ::1)');
  }
}
