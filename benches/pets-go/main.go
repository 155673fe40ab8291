// The seed article's feeding-pets simulations ("Golang: Discrete Event Simulation 101",
// shared/seeds/001), completed so that they build and run: the article shows the three `run`
// functions but leaves out the event queues. Here the ring queue (the article imports
// github.com/sombr/go-container-roundrobin) is a minimal slice ring, and the heap queue is the
// standard library's container/heap, as the article's "Golang Priority Queue" post builds it.
// The three `run` bodies are the article's, unchanged except for names.
//
//	go build -o pets-go . && ./pets-go events      # or step, jump; prints the article's lines
//
// Parameters are the article's: 1,000,000 pets, 10 feeders, break chance 0.05, repair 120,
// eating 15, seed 100. Used by BENCHMARKS.md ("Feeding pets") side by side with warpsim.
package main

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand"
	"os"
)

// EventQueue is the article's queue interface.
type EventQueue[T any] interface {
	Push(element T) error
	Pop() (T, error)
	Peek() (T, error)
	Size() int
}

var errEmpty = errors.New("empty queue")

// RingQueue: the article's FIFO for repair times (keys arrive in order).
type RingQueue[T any] struct {
	data       []T
	head, size int
}

func NewRingQueue[T any](capacity int) *RingQueue[T] {
	return &RingQueue[T]{data: make([]T, capacity)}
}

func (r *RingQueue[T]) Push(e T) error {
	if r.size == len(r.data) {
		grown := make([]T, 2*len(r.data)+1)
		for i := 0; i < r.size; i++ {
			grown[i] = r.data[(r.head+i)%len(r.data)]
		}
		r.data, r.head = grown, 0
	}
	r.data[(r.head+r.size)%len(r.data)] = e
	r.size++
	return nil
}

func (r *RingQueue[T]) Pop() (T, error) {
	var zero T
	if r.size == 0 {
		return zero, errEmpty
	}
	e := r.data[r.head]
	r.head = (r.head + 1) % len(r.data)
	r.size--
	return e, nil
}

func (r *RingQueue[T]) Peek() (T, error) {
	var zero T
	if r.size == 0 {
		return zero, errEmpty
	}
	return r.data[r.head], nil
}

func (r *RingQueue[T]) Size() int { return r.size }

// Event is the article's event of the third version.
type Event struct {
	time int
	kind byte
}

type eventHeap []Event

func (h eventHeap) Len() int            { return len(h) }
func (h eventHeap) Less(i, j int) bool  { return h[i].time < h[j].time }
func (h eventHeap) Swap(i, j int)       { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x interface{}) { *h = append(*h, x.(Event)) }
func (h *eventHeap) Pop() interface{} {
	old := *h
	n := len(old)
	e := old[n-1]
	*h = old[:n-1]
	return e
}

// HeapQueue: container/heap behind the article's interface.
type HeapQueue struct{ h eventHeap }

func (q *HeapQueue) Push(e Event) error { heap.Push(&q.h, e); return nil }
func (q *HeapQueue) Pop() (Event, error) {
	if len(q.h) == 0 {
		return Event{}, errEmpty
	}
	return heap.Pop(&q.h).(Event), nil
}
func (q *HeapQueue) Peek() (Event, error) {
	if len(q.h) == 0 {
		return Event{}, errEmpty
	}
	return q.h[0], nil
}
func (q *HeapQueue) Size() int { return len(q.h) }

type StepSimulation struct {
	eventQueue     EventQueue[int]
	taskCount      int
	gateCount      int
	breakChance    float32
	repairTime     int
	processingTime int
}

// The article's first version: fixed time increments.
func (s *StepSimulation) runStep(seed int64) (percentileTime [3]int) {
	rgen := rand.New(rand.NewSource(seed))
	var time, done, broken int
	for done < s.taskCount {
		for s.eventQueue.Size() > 0 {
			ts, _ := s.eventQueue.Peek()
			if ts > time {
				break
			}
			s.eventQueue.Pop()
			broken--
		}
		time += s.processingTime
		done += s.gateCount - broken
		for idx := 0; idx < s.gateCount-broken; idx++ {
			if rgen.Float32() < s.breakChance {
				broken++
				s.eventQueue.Push(time + s.repairTime)
			}
		}
		percentDone := 100 * done / s.taskCount
		percentiles := []int{50, 95, 99}
		for idx, p := range percentiles {
			if percentDone >= p && percentileTime[idx] == 0 {
				percentileTime[idx] = time
			}
		}
	}
	return
}

// The article's second version: event-time jumps.
func (s *StepSimulation) runJump(seed int64) (percentileTime [3]int) {
	rgen := rand.New(rand.NewSource(seed))
	var time, done, broken int
	for done < s.taskCount {
		for s.eventQueue.Size() > 0 {
			ts, _ := s.eventQueue.Peek()
			if ts > time {
				break
			}
			s.eventQueue.Pop()
			broken--
		}
		nextTime := time + s.processingTime
		if s.eventQueue.Size() > 0 {
			nextTime, _ = s.eventQueue.Peek()
		}
		done += (s.gateCount - broken) * (nextTime - time) / s.processingTime
		time = nextTime
		for idx := 0; idx < s.gateCount-broken; idx++ {
			if rgen.Float32() < s.breakChance {
				broken++
				s.eventQueue.Push(time + s.repairTime)
			}
		}
		percentDone := 100 * done / s.taskCount
		percentiles := []int{50, 95, 99}
		for idx, p := range percentiles {
			if percentDone >= p && percentileTime[idx] == 0 {
				percentileTime[idx] = time
			}
		}
	}
	return
}

type Simulation struct {
	eventQueue     EventQueue[Event]
	taskCount      int
	gateCount      int
	breakChance    float32
	repairTime     int
	processingTime int
}

// The article's third version: an event priority queue.
func (s *Simulation) run(seed int64) (percentileTime [3]int) {
	rgen := rand.New(rand.NewSource(seed))
	var time, done, inflight, broken int
	for done < s.taskCount {
		for idx := 0; idx < s.gateCount && broken < s.gateCount; idx++ {
			if rgen.Float32() < s.breakChance {
				broken++
				repairTime := s.repairTime + int(rgen.NormFloat64()*float64(s.repairTime)/4)
				if repairTime < 0 {
					repairTime = 0
				}
				s.eventQueue.Push(Event{kind: 'R', time: time + repairTime})
			}
		}
		for inflight < s.gateCount-broken {
			inflight++
			processingTime := s.processingTime + int(rgen.NormFloat64()*float64(s.processingTime)/4)
			if processingTime < 0 {
				processingTime = 0
			}
			s.eventQueue.Push(Event{kind: 'D', time: time + processingTime})
		}
		nextEvent, _ := s.eventQueue.Pop()
		if nextEvent.kind == 'R' {
			broken--
		} else {
			done++
			inflight--
		}
		time = nextEvent.time
		percentDone := 100 * done / s.taskCount
		percentiles := []int{50, 95, 99}
		for idx, p := range percentiles {
			if percentDone >= p && percentileTime[idx] == 0 {
				percentileTime[idx] = time
			}
		}
	}
	return
}

func main() {
	style := "events"
	if len(os.Args) > 1 {
		style = os.Args[1]
	}
	var res [3]int
	switch style {
	case "step", "jump":
		sim := StepSimulation{
			eventQueue:     NewRingQueue[int](10),
			taskCount:      1_000_000,
			gateCount:      10,
			breakChance:    0.05,
			repairTime:     120,
			processingTime: 15,
		}
		if style == "step" {
			res = sim.runStep(100)
		} else {
			res = sim.runJump(100)
		}
	case "events":
		sim := Simulation{
			eventQueue:     &HeapQueue{},
			taskCount:      1_000_000,
			gateCount:      10,
			breakChance:    0.05,
			repairTime:     120,
			processingTime: 15,
		}
		res = sim.run(100)
	default:
		fmt.Fprintln(os.Stderr, "usage: pets-go step|jump|events")
		os.Exit(2)
	}
	fmt.Printf("Time to X%%: 50%% = %d, 95%% = %d, 99%% = %d\n", res[0], res[1], res[2])
	fmt.Printf("Relative Time to X%%: 50%% = 1x, 95%% = %.2fx, 99%% = %.2fx\n", float32(res[1])/float32(res[0]), float32(res[2])/float32(res[0]))
}
