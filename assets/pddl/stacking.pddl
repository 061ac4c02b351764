; Stacking domain of AgenticLab (paper Fig. 9), reproduced verbatim except for one
; closing parenthesis: the figure ends with six, one more than the (define ...) needs,
; which no PDDL parser accepts.
;
; What each predicate means on the table:
;   (on-top-of ?o1 ?o2)  ?o1 rests directly on ?o2 (a cube on a plate, a cube on a cube).
;                        Objects standing on the table surface itself rest on a plate,
;                        mat, cloth, paper or bowl object, which the problem declares.
;   (hand-empty)         the gripper holds nothing.
;   (holding ?o)         ?o is in the gripper, lifted off whatever it rested on.
;   (clear ?o)           nothing rests on ?o, so ?o can be picked or have something put on it.
;
; Actions: (pick ?obj ?underobj) lifts ?obj off ?underobj; (place-on-object ?obj ?target)
; puts the held ?obj onto ?target. Problems may use the base types (cube, plate, ...)
; or the colour subtypes of cube.
(define (domain stacking)
  (:requirements :strips :typing)
  (:types cube cloth plate bowl mat paper - object
           purple-cube blue-cube orange-cube yellow-cube green-cube - cube)
  (:predicates
   (on-top-of ?o1 - object ?o2 - object)
   (hand-empty)
   (holding ?o - object)
   (clear ?o - object))

  (:action pick
   :parameters (?obj - object ?underobj - object)
   :precondition (and (hand-empty)
                      (clear ?obj)
                      (on-top-of ?obj ?underobj))
   :effect (and (holding ?obj)
                (clear ?underobj)
                (not (hand-empty))
                (not (on-top-of ?obj ?underobj))
                (not (clear ?obj))))

  (:action place-on-object
   :parameters (?obj - object ?target - object)
   :precondition (and (holding ?obj)
                      (clear ?target))
   :effect (and (on-top-of ?obj ?target)
                (hand-empty)
                (clear ?obj)
                (not (clear ?target))
                (not (holding ?obj)))))
