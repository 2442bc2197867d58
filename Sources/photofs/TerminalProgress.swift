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

    func finish() {}
}
