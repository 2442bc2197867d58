// Import progress: one self-redrawing line on a terminal, plain log lines otherwise (CI, pipes, cron).
import Foundation
import Logging
import PhotoSources

final class TerminalProgress: ImportProgress, @unchecked Sendable {
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let logger: Logger
    private let lock = NSLock()
    private var lastDraw = Date.distantPast
    private var completedStages = Set<String>()

    init(logger: Logger) { self.logger = logger }

    func update(stage: String, done: Int, total: Int?) {
        lock.lock()
        defer { lock.unlock() }
        let complete = total.map { done >= $0 } ?? false
        if completedStages.contains(stage) { return }
        if complete { completedStages.insert(stage) }
        if isTerminal {
            // Redraw at most 10 times a second: the HEAD phase reports hundreds of updates per second.
            guard complete || Date().timeIntervalSince(lastDraw) > 0.1 else { return }
            lastDraw = Date()
            let width = 30
            let filled = total.map { $0 > 0 ? width * min(done, $0) / $0 : width } ?? 0
            let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
            let count = total.map { "\(done)/\($0)" } ?? "\(done)"
            FileHandle.standardError.write(Data("\r\u{1B}[K\(stage.padding(toLength: 7, withPad: " ", startingAt: 0)) \(bar) \(count)".utf8))
            if complete { FileHandle.standardError.write(Data("\n".utf8)) }
        } else if complete {
            logger.info("import stage done", metadata: ["stage": "\(stage)", "count": "\(done)"])
        }
    }

    /// An API call waits for the rate limit or a server's Retry-After: said on its own line when it is long
    /// enough to notice, so a pause in the bar is explained.
    func waiting(_ wait: RateLimitWait) {
        let text: String
        switch wait {
        case .rate(let seconds):
            guard seconds >= 1 else { return }
            text = String(format: "waiting %.1f s for the API rate limit", seconds)
        case .serverAsked(let seconds, let status):
            text = String(format: "the server answered %d: waiting %.1f s as it asked", status, seconds)
        }
        lock.lock()
        defer { lock.unlock() }
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K\(text)\n".utf8)) } else { logger.notice("\(text)") }
    }

    func finish() {}
}
