// Runs blocking work (HTTP requests) on a fixed number of threads; Dispatch would cap it at the core count.
import Foundation

public enum BoundedParallel {
    /// Calls `body` once for every index in 0..<count, at most `width` at a time, and returns when all are done.
    /// Blocking I/O wants more workers than cores (2 here): 8 HEADs in flight hide the round trips.
    public static func forEach(count: Int, width: Int, _ body: @escaping @Sendable (Int) -> Void) {
        guard count > 0 else { return }
        final class Cursor: @unchecked Sendable {
            let lock = NSLock()
            var next = 0
            func take() -> Int { lock.lock(); defer { lock.unlock() }; next += 1; return next - 1 }
        }
        let cursor = Cursor()
        let group = DispatchGroup()
        for _ in 0..<max(1, min(width, count)) {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while case let index = cursor.take(), index < count { body(index) }
            }
        }
        group.wait()
    }
}
