// A swift-log handler that keeps every line in memory, so tests can assert what was (and was not) logged.
import Foundation
import Logging

public final class LogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String] = []

    public init() {}

    /// A logger at `trace` level writing into this recorder.
    public func logger(label: String = "test") -> Logger {
        var logger = Logger(label: label) { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    /// Every line so far, as "<level> <message> <metadata key=value ...>".
    public var lines: [String] { lock.lock(); defer { lock.unlock() }; return recorded }

    public func count(containing text: String) -> Int { lines.filter { $0.contains(text) }.count }

    fileprivate func append(_ line: String) { lock.lock(); recorded.append(line); lock.unlock() }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(level: Logger.Level, message: Logger.Message, metadata extra: Logger.Metadata?, source: String,
                 file: String, function: String, line: UInt) {
            let all = self.metadata.merging(extra ?? [:]) { $1 }
            let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            recorder.append("\(level) \(message) \(fields)")
        }
    }
}
