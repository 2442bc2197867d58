// Import progress: one self-redrawing line on a terminal, plain log lines otherwise (CI, pipes, cron).
import Foundation
import Logging
import PhotoSources

/// On a terminal, one line redrawn in place with every stage seen so far — "pages 3/10 · photos 1500 ·
/// sizes 120/500 · albums 1/4 · waited 12 s" — so a long import shows all it is doing at once; elsewhere one
/// log line per finished stage.
final class TerminalProgress: ImportProgress, @unchecked Sendable {
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let logger: Logger
    /// The process's one status line, which log lines are printed above.
    private let statusLine = LoggingBootstrap.statusLine
    private let lock = NSLock()
    /// When the line was last drawn (monotonic: a clock step must not freeze the bar); nil before the first.
    private var lastDraw: DispatchTime?
    /// Stages in the order they first reported, with their latest counts.
    private var stages: [(name: String, done: Int, total: Int?)] = []
    private var loggedStages = Set<String>()
    private var waited: TimeInterval = 0

    init(logger: Logger) { self.logger = logger }

    func update(stage: String, done: Int, total: Int?) {
        lock.lock()
        defer { lock.unlock() }
        if let index = stages.firstIndex(where: { $0.name == stage }) {
            stages[index] = (stage, done, total)
        } else {
            stages.append((stage, done, total))
        }
        let complete = total.map { done >= $0 } ?? false
        if isTerminal {
            // Redraw at most 10 times a second: the HEAD phase reports hundreds of updates per second.
            let now = DispatchTime.now()
            guard complete || lastDraw.map({ now.uptimeNanoseconds - $0.uptimeNanoseconds > 100_000_000 }) ?? true else { return }
            lastDraw = now
            draw()
        } else if complete, loggedStages.insert(stage).inserted {
            logger.info("import stage done", metadata: ["stage": "\(stage)", "count": "\(done)"])
        }
    }

    /// Called with the lock held.
    private func draw() {
        var parts = stages.map { stage in "\(stage.name) " + (stage.total.map { "\(min(stage.done, $0))/\($0)" } ?? "\(stage.done)") }
        if waited >= 1 { parts.append(String(format: "waited %.0f s", waited)) }
        // Cut to the terminal's width: a line that wraps would scroll at every redraw instead of redrawing.
        var size = winsize()
        let width = ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 1 ? Int(size.ws_col) - 1 : 79
        let line = String(parts.joined(separator: " · ").prefix(width))
        statusLine.show(line)
    }

    /// An API call waits for the rate limit or a server's Retry-After: said on its own line when it is long
    /// enough to notice, so a pause in the bar is explained.
    func waiting(_ wait: RateLimitWait) {
        let text: String?
        let seconds: TimeInterval
        switch wait {
        case .rate(let wait):
            seconds = wait
            // Short waits are the rate at work, counted in "waited" without a line of their own.
            text = wait >= 1 ? String(format: "waiting %.1f s for the API rate limit", wait) : nil
        case .serverAsked(let wait, let status):
            seconds = wait
            text = String(format: "the server answered %d: waiting %.1f s as it asked", status, wait)
        }
        lock.lock()
        defer { lock.unlock() }
        waited += seconds
        guard let text else { return }
        if isTerminal {
            statusLine.printAbove { FileHandle.standardError.write(Data("\(text)\n".utf8)) }
            draw()
        } else {
            logger.notice("\(text)")
        }
    }

    /// Ends the redrawn line, so what is printed next starts on its own.
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        if isTerminal && !stages.isEmpty {
            draw()
            statusLine.end()
        }
        stages = []
    }
}
