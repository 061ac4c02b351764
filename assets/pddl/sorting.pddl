; Sorting domain: put items (fruit, toys, snacks, ...) into containers (bins, bowls, boxes).
;
; What each predicate means on the table:
;   (on-table ?o)    item ?o lies on the table top, outside every container.
;   (in ?o ?c)       item ?o lies inside container ?c.
;   (hand-empty)     the gripper holds nothing.
;   (holding ?o)     item ?o is in the gripper, lifted off the table or out of its container.
;
; Containers stay where they are: only items are picked and placed. Items do not block each
; other (a container holds any number of items), so there is no "clear" predicate.
(define (domain sorting)
  (:requirements :strips :typing)
  (:types item container - object)
  (:predicates
   (on-table ?o - item)
   (in ?o - item ?c - container)
   (hand-empty)
   (holding ?o - item))

  (:action pick
   :parameters (?obj - item)
   :precondition (and (hand-empty)
                      (on-table ?obj))
   :effect (and (holding ?obj)
                (not (hand-empty))
                (not (on-table ?obj))))

  (:action pick-from
   :parameters (?obj - item ?c - container)
   :precondition (and (hand-empty)
                      (in ?obj ?c))
   :effect (and (holding ?obj)
                (not (hand-empty))
                (not (in ?obj ?c))))

  (:action place-in
   :parameters (?obj - item ?c - container)
   :precondition (holding ?obj)
   :effect (and (in ?obj ?c)
                (hand-empty)
                (not (holding ?obj))))

  (:action place-on-table
   :parameters (?obj - item)
   :precondition (holding ?obj)
   :effect (and (on-table ?obj)
                (hand-empty)
                (not (holding ?obj)))))
