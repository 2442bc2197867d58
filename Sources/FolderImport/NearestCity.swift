// The nearest city to a GPS position, within a distance, over a grid of one-degree cells (pure, no I/O).
import Foundation

public struct City: Equatable, Sendable {
    public var name: String
    /// State or province ("" when the data set has none).
    public var state: String
    public var country: String
    public var timezone: String
    public var latitude: Double
    public var longitude: Double
    /// The region's name when its state's alone would be another country's region too (`GeonamesCities`).
    public var region: String? = nil
    /// People living there (0: not known).
    public var population: Int
    public init(name: String, state: String, country: String, timezone: String, latitude: Double, longitude: Double,
                population: Int = 0) {
        self.name = name; self.state = state; self.country = country; self.timezone = timezone
        self.latitude = latitude; self.longitude = longitude; self.population = population
    }

    /// How far from its point a city still names a photo before a town nearer to it: 15 km per million people's
    /// square root, at least 1 km and at most 20 (Mumbai's 12.7 million: 53 km, so 20; Lisbon's 518,000: 10.8
    /// km; a town of 20,000: 2.1 km). GeoNames puts a city at one point, often its old centre, and its suburbs
    /// are towns of their own: the nearest point named a photo at the Gateway of India "Uran" (12 km, against
    /// Mumbai's 17), one in Asakusa "Urayasu", one at Belém's tower "Algés".
    var claimKilometres: Double { min(20, max(1, 0.015 * Double(max(0, population)).squareRoot())) }

    /// The region a photo taken here goes to: the city's state or province, else its country.
    public var regionName: String { region ?? (state.isEmpty ? (country.isEmpty ? name : country) : state) }
}

/// Cities bucketed by one-degree cells, so a lookup looks at the few cells around the position instead of
/// all 24,361 cities of Debian's libgeonames (10,000 photos × 24,361 distances took seconds).
public struct NearestCity: Sendable {
    /// Beyond 50 km from every city of 15,000 people or more, a photo is "somewhere": mountains, sea, desert.
    /// 50 km covers a city's suburbs and the towns around it, which belong to its state anyway.
    public static let defaultMaxKilometres = 50.0
    static let earthRadiusKilometres = 6371.0

    private let cities: [City]
    private var cells: [Int: [Int]] = [:]
    public let maxKilometres: Double

    public init(cities: [City], maxKilometres: Double = NearestCity.defaultMaxKilometres) {
        self.cities = cities.filter {
            $0.latitude.isFinite && $0.longitude.isFinite && abs($0.latitude) <= 90 && abs($0.longitude) <= 180
        }
        self.maxKilometres = maxKilometres
        for (index, city) in self.cities.enumerated() {
            cells[NearestCity.cell(latitude: NearestCity.row(city.latitude), longitude: NearestCity.column(city.longitude)),
                  default: []].append(index)
        }
    }

    public var count: Int { cities.count }

    static func row(_ latitude: Double) -> Int { min(89, max(-90, Int(floor(latitude)))) }
    static func column(_ longitude: Double) -> Int { min(179, max(-180, Int(floor(longitude)))) }
    static func cell(latitude row: Int, longitude column: Int) -> Int { (row + 90) * 360 + (column + 180) }

    /// The nearest city within `maxKilometres`, nil when there is none or the position is not one.
    public func nearest(latitude: Double, longitude: Double) -> City? {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
        // One degree of latitude is 111 km; a degree of longitude shrinks with cos(latitude), so more columns
        // are searched towards the poles (all of them within 1° of a pole).
        let rowSpan = Int(ceil(maxKilometres / 111.0))
        let shrink = cos((abs(latitude) + Double(rowSpan)).clamped(to: 0...90) * .pi / 180)
        let columnSpan = shrink < 0.01 ? 180 : min(180, Int(ceil(maxKilometres / (111.32 * shrink))))
        let centreRow = NearestCity.row(latitude), centreColumn = NearestCity.column(longitude)
        var within: [(city: City, kilometres: Double)] = []
        for row in max(-90, centreRow - rowSpan)...min(89, centreRow + rowSpan) {
            var visited = Set<Int>()
            for offset in -columnSpan...columnSpan {
                // Longitude wraps at the antimeridian.
                let column = ((centreColumn + offset + 180) % 360 + 360) % 360 - 180
                guard visited.insert(column).inserted else { continue }
                for index in cells[NearestCity.cell(latitude: row, longitude: column)] ?? [] {
                    let city = cities[index]
                    let distance = NearestCity.kilometres(latitude, longitude, city.latitude, city.longitude)
                    if distance <= maxKilometres { within.append((city, distance)) }
                }
            }
        }
        return NearestCity.naming(within)
    }

    /// The city that names a photo among those within the limit (`kilometres` away): the nearest one's state
    /// decides the region, as before; within that state, of the cities whose `claimKilometres` reach the photo,
    /// the one it is nearest to for its size, so a big city's suburbs say the city and a town's centre says the
    /// town (Versailles, 17 km from Paris's point). None reaching it (the countryside): the nearest. Across a
    /// state's border the nearest city stays: Jersey City is New Jersey's, whatever New York's size. Ties: the
    /// nearer.
    static func naming(_ within: [(city: City, kilometres: Double)]) -> City? {
        guard let nearest = within.min(by: { $0.kilometres < $1.kilometres }) else { return nil }
        let claiming = within.filter {
            $0.city.state == nearest.city.state && $0.city.country == nearest.city.country
                && $0.kilometres <= $0.city.claimKilometres
        }
        return claiming.min { a, b in
            let (x, y) = (a.kilometres / a.city.claimKilometres, b.kilometres / b.city.claimKilometres)
            return x != y ? x < y : a.kilometres < b.kilometres
        }?.city ?? nearest.city
    }

    /// Great-circle distance (haversine).
    static func kilometres(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (lat2 - lat1) * radians, dLon = (lon2 - lon1) * radians
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * earthRadiusKilometres * asin(min(1, sqrt(a)))
    }
}

extension Double {
    func clamped(to range: ClosedRange<Double>) -> Double { Swift.min(Swift.max(self, range.lowerBound), range.upperBound) }
}
